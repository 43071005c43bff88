import { describe, expect, it } from 'vitest';
import type { PowerState, RestartStatus } from '../../../../infra/api/machine-fields.js';
import {
  decideRestart,
  restartAfter,
  restartEvent,
  withRestartPower,
  type RestartPlan,
  type RestartSubject,
} from '../../../../controller/reconcilers/infra-machine/restart.js';

const T1 = '2026-12-02T18:00:00.000Z';
const T2 = '2026-12-02T18:05:00.000Z';
const now = new Date('2026-12-02T18:06:00.000Z');
const record = (requestedAt: string, phase: RestartStatus['phase']): RestartStatus => ({ requestedAt, phase, lastTransitionTime: '2026-12-02T18:00:01.000Z' });
const machine = (spec: RestartSubject['spec'], restart?: RestartStatus): RestartSubject => ({ spec, ...(restart ? { status: { restart } } : {}) });

describe('restart requests (spec.restartRequestedAt)', () => {
  it.each<[string, RestartSubject, boolean, RestartPlan]>([
    ['does nothing without a request', machine({}), true, { kind: 'none' }],
    ['does nothing for a request already carried out', machine({ restartRequestedAt: T1 }, record(T1, 'Restarted')), true, { kind: 'none' }],
    ['does nothing for a request already skipped', machine({ restartRequestedAt: T1 }, record(T1, 'Skipped')), true, { kind: 'none' }],
    [
      'shuts the guest down for a new request',
      machine({ restartRequestedAt: T2 }, record(T1, 'Restarted')),
      true,
      { kind: 'drive', requestedAt: T2, phase: 'ShuttingDown', power: 'PoweredOff' },
    ],
    [
      'keeps shutting down a request under way',
      machine({ restartRequestedAt: T1 }, record(T1, 'ShuttingDown')),
      true,
      { kind: 'drive', requestedAt: T1, phase: 'ShuttingDown', power: 'PoweredOff' },
    ],
    [
      'powers on once the record says the VM went off',
      machine({ restartRequestedAt: T1 }, record(T1, 'PoweringOn')),
      true,
      { kind: 'drive', requestedAt: T1, phase: 'PoweringOn', power: 'PoweredOn' },
    ],
    [
      'starts over for a newer request made while one is under way',
      machine({ restartRequestedAt: T2 }, record(T1, 'PoweringOn')),
      true,
      { kind: 'drive', requestedAt: T2, phase: 'ShuttingDown', power: 'PoweredOff' },
    ],
    [
      'skips a request while the VM is to be off',
      machine({ restartRequestedAt: T1, desiredPowerState: 'PoweredOff' }),
      true,
      { kind: 'skip', requestedAt: T1, why: 'spec.desiredPowerState is PoweredOff' },
    ],
    [
      'skips a request made before the first boot',
      machine({ restartRequestedAt: T1 }),
      false,
      { kind: 'skip', requestedAt: T1, why: 'the VM had not booted yet' },
    ],
  ])('%s', (_, subject, provisioned, plan) => {
    expect(decideRestart(subject, provisioned)).toEqual(plan);
  });

  const shuttingDown: RestartPlan = { kind: 'drive', requestedAt: T1, phase: 'ShuttingDown', power: 'PoweredOff' };
  const poweringOn: RestartPlan = { kind: 'drive', requestedAt: T1, phase: 'PoweringOn', power: 'PoweredOn' };
  it.each<[string, RestartPlan, PowerState | undefined, RestartStatus | undefined, RestartStatus | undefined]>([
    ['records nothing without a request', { kind: 'none' }, 'PoweredOn', undefined, undefined],
    [
      'records ShuttingDown while the guest still runs',
      shuttingDown,
      'PoweredOn',
      undefined,
      { requestedAt: T1, phase: 'ShuttingDown', lastTransitionTime: now.toISOString() },
    ],
    [
      'records PoweringOn, not Restarted, in the pass that sees the VM off',
      shuttingDown,
      'PoweredOff',
      record(T1, 'ShuttingDown'),
      { requestedAt: T1, phase: 'PoweringOn', lastTransitionTime: now.toISOString() },
    ],
    ['keeps the phase while a backend task runs (nothing seen)', shuttingDown, undefined, record(T1, 'ShuttingDown'), record(T1, 'ShuttingDown')],
    [
      'records Restarted once the VM is seen on again',
      poweringOn,
      'PoweredOn',
      record(T1, 'PoweringOn'),
      { requestedAt: T1, phase: 'Restarted', lastTransitionTime: now.toISOString() },
    ],
    ['keeps PoweringOn while the VM is not on yet', poweringOn, 'PoweredOff', record(T1, 'PoweringOn'), record(T1, 'PoweringOn')],
  ])('%s', (_, plan, power, previous, after) => {
    expect(restartAfter(plan, power, previous, now)).toEqual(after);
  });

  it('is carried out once across a provider killed at any step: never lost, never repeated', () => {
    // The provider may die after any backend call and before its status write: the status is then as before the pass.
    const passes = (start: RestartStatus | undefined, vm: PowerState): { restarts: number; final: RestartStatus | undefined } => {
      let status = start;
      let power = vm;
      let restarts = 0;
      for (let pass = 0; pass < 6; pass++) {
        const plan = decideRestart(machine({ restartRequestedAt: T1 }, status), true);
        if (plan.kind !== 'drive') break;
        // The backend moves the VM where the plan says; an off-then-on is one restart.
        if (plan.power === 'PoweredOn' && power === 'PoweredOff') restarts++;
        power = plan.power;
        status = restartAfter(plan, power, status, now);
      }
      return { restarts, final: status };
    };
    expect(passes(undefined, 'PoweredOn')).toEqual({ restarts: 1, final: expect.objectContaining({ phase: 'Restarted' }) });
    // Killed after the shutdown, before writing ShuttingDown: the VM is found off, powered on once.
    expect(passes(undefined, 'PoweredOff')).toEqual({ restarts: 1, final: expect.objectContaining({ phase: 'Restarted' }) });
    // Killed after powering on, before writing Restarted: PoweringOn and on is done, not restarted again.
    expect(passes(record(T1, 'PoweringOn'), 'PoweredOn')).toEqual({ restarts: 0, final: expect.objectContaining({ phase: 'Restarted' }) });
  });

  it('drives the pass to the phase power instead of spec.desiredPowerState', () => {
    const request = { name: 'web-1', spec: { desiredPowerState: 'PoweredOn' as const, vcpus: 2 } };
    expect(withRestartPower(request, { kind: 'drive', requestedAt: T1, phase: 'ShuttingDown', power: 'PoweredOff' }).spec).toEqual({
      desiredPowerState: 'PoweredOff',
      vcpus: 2,
    });
    expect(withRestartPower(request, { kind: 'none' })).toBe(request);
  });

  it.each<[string, RestartStatus | undefined, RestartStatus | undefined, RestartPlan, string | undefined]>([
    ['says when a restart begins', record(T1, 'Restarted'), record(T2, 'ShuttingDown'), shuttingDown, 'Restarting'],
    ['says when a restart begins with the VM found off', undefined, record(T1, 'PoweringOn'), shuttingDown, 'Restarting'],
    ['is silent while the guest shuts down', record(T1, 'ShuttingDown'), record(T1, 'ShuttingDown'), shuttingDown, undefined],
    ['is silent when the VM goes off', record(T1, 'ShuttingDown'), record(T1, 'PoweringOn'), shuttingDown, undefined],
    ['says when the restart is done', record(T1, 'PoweringOn'), record(T1, 'Restarted'), poweringOn, 'Restarted'],
    [
      'says when a request is skipped',
      undefined,
      record(T1, 'Skipped'),
      { kind: 'skip', requestedAt: T1, why: 'spec.desiredPowerState is PoweredOff' },
      'RestartSkipped',
    ],
  ])('%s', (_, before, after, plan, reason) => {
    expect(restartEvent(before, after, plan)?.reason).toBe(reason);
  });
});
