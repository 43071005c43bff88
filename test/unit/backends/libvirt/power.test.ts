// Power of a libvirt domain (pure): libvirt's states as PowerState, and the next step to the desired one.
import { describe, expect, it } from 'vitest';
import { DomainState } from '../../../../controller/backends/libvirt/client/constants.js';
import { decidePowerStep, SHUTDOWN_GRACE_MS, toPowerState } from '../../../../controller/backends/libvirt/machine/power.js';

const running = { state: DomainState.Running, managedSave: false };
const off = { state: DomainState.Shutoff, managedSave: false };
const saved = { state: DomainState.Shutoff, managedSave: true };
const paused = { state: DomainState.Paused, managedSave: false };

describe('libvirt domain power', () => {
  it.each([
    [DomainState.Running, false, 'PoweredOn'],
    [DomainState.Blocked, false, 'PoweredOn'],
    [DomainState.ShuttingDown, false, 'PoweredOn'],
    [DomainState.Paused, false, 'Suspended'],
    [DomainState.PMSuspended, false, 'Suspended'],
    [DomainState.Shutoff, true, 'Suspended'],
    [DomainState.Shutoff, false, 'PoweredOff'],
    [DomainState.Crashed, false, 'PoweredOff'],
  ] as const)('state %i (managed save %s) is %s', (state, managedSave, power) => {
    expect(toPowerState({ state, managedSave })).toBe(power);
  });

  it.each([
    ['starts an off domain', off, 'PoweredOn', undefined, 0, 'start'],
    ['restores a saved domain by starting it', saved, 'PoweredOn', undefined, 0, 'start'],
    ['resumes a paused domain', paused, 'PoweredOn', undefined, 0, 'resume'],
    ['asks a running guest to shut down', running, 'PoweredOff', undefined, 0, 'shutdown'],
    ['waits while the guest shuts down', running, 'PoweredOff', 1_000, 1_000 + SHUTDOWN_GRACE_MS - 1, 'none'],
    ['destroys the domain once the grace period is over', running, 'PoweredOff', 1_000, 1_000 + SHUTDOWN_GRACE_MS, 'destroy'],
    ['destroys a paused domain (it cannot see the power button)', paused, 'PoweredOff', undefined, 0, 'destroy'],
    ['discards the saved state of a suspended domain asked to be off', saved, 'PoweredOff', undefined, 0, 'discardSave'],
    ['saves a running domain to suspend it', running, 'Suspended', undefined, 0, 'managedSave'],
    ['starts an off domain before it can be saved', off, 'Suspended', undefined, 0, 'start'],
    ['leaves a converged domain alone', running, 'PoweredOn', undefined, 0, 'none'],
  ] as const)('%s', (_what, observed, desired, since, now, step) => {
    expect(decidePowerStep(observed, desired, since, now)).toBe(step);
  });
});
