// Power of a domain (pure): libvirt's state as a PowerState, and the one step
// that takes it towards the desired one. PoweredOff is an ACPI shutdown first
// (the guest flushes its disks), then a destroy once the grace period ran out;
// the period is spread over passes (the request time is remembered), never
// waited for in one. Suspended is a managed save: memory written to disk and
// the domain stopped, as vSphere's suspend; the next start restores it. A
// domain someone paused counts as Suspended too.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import { SHUTDOWN_GRACE_MS } from '../../kit/machine/shutdown-grace.js';
import { DomainState } from '../client/constants.js';

export { SHUTDOWN_GRACE_MS };

export interface ObservedPower {
  /** virDomainState. */
  readonly state: number;
  /** Shut off with a managed save image (only read for a shut-off domain). */
  readonly managedSave: boolean;
}

export type PowerStep =
  | 'none'
  | 'start'
  | 'resume'
  /** ACPI (or the agent: libvirt picks) shutdown request. */
  | 'shutdown'
  /** Hard stop. */
  | 'destroy'
  | 'managedSave'
  /** Drop a managed save image: the domain is then plainly off. */
  | 'discardSave';

export function toPowerState({ state, managedSave }: ObservedPower): PowerState {
  switch (state) {
    case DomainState.Running:
    case DomainState.Blocked:
    case DomainState.ShuttingDown:
      return 'PoweredOn';
    case DomainState.Paused:
    case DomainState.PMSuspended:
      return 'Suspended';
    default:
      return managedSave ? 'Suspended' : 'PoweredOff';
  }
}

/** True while the domain runs a guest (its vCPUs may be paused). */
export function isActive(state: number): boolean {
  return state !== DomainState.Shutoff && state !== DomainState.Crashed && state !== DomainState.NoState;
}

/**
 * The next step from `observed` to `desired`. `shutdownSince`: when this
 * provider asked the guest to shut down (undefined: not asked); `now` decides
 * whether its grace period is over.
 */
export function decidePowerStep(observed: ObservedPower, desired: PowerState, shutdownSince: number | undefined, now: number): PowerStep {
  const current = toPowerState(observed);
  if (desired === 'PoweredOn') {
    if (current === 'PoweredOn') return 'none';
    if (observed.state === DomainState.Paused) return 'resume';
    // PMSuspended (the guest suspended itself to RAM) wakes on its own devices: left alone.
    if (observed.state === DomainState.PMSuspended) return 'none';
    return 'start';
  }
  if (desired === 'PoweredOff') {
    if (!isActive(observed.state)) return observed.managedSave ? 'discardSave' : 'none';
    // A paused guest cannot see the power button.
    if (current !== 'PoweredOn') return 'destroy';
    if (shutdownSince === undefined) return 'shutdown';
    return now - shutdownSince >= SHUTDOWN_GRACE_MS ? 'destroy' : 'none';
  }
  // Suspended: only a running domain saves; an off one is started first (as vSphere suspends).
  if (current === 'Suspended') return 'none';
  return current === 'PoweredOn' ? 'managedSave' : 'start';
}
