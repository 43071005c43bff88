// Power of a PVE VM (pure): what `status/current` says, as the API's power
// states, and the one operation that moves it toward the desired state.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import type { QemuStatus } from '../client/wire-types.js';

/** stopped → PoweredOff; running and paused by QMP (PVE's suspend) → Suspended; running → PoweredOn. */
export function powerStateOf(status: Pick<QemuStatus, 'status' | 'qmpstatus'>): PowerState {
  if (status.status === 'stopped') return 'PoweredOff';
  return status.qmpstatus === 'paused' || status.qmpstatus === 'suspended' ? 'Suspended' : 'PoweredOn';
}

/**
 * The next operation, each one PVE task: `shutdown` is ACPI with PVE's own
 * deadline then a hard stop (forceStop); a paused guest cannot take ACPI, so
 * it is stopped. Suspending a stopped VM starts it first.
 */
export type PowerStep = 'start' | 'shutdown' | 'stop' | 'suspend' | 'resume';

export function nextPowerStep(current: PowerState, desired: PowerState): PowerStep | undefined {
  if (current === desired) return undefined;
  switch (desired) {
    case 'PoweredOn':
      return current === 'Suspended' ? 'resume' : 'start';
    case 'PoweredOff':
      return current === 'Suspended' ? 'stop' : 'shutdown';
    case 'Suspended':
      return current === 'PoweredOff' ? 'start' : 'suspend';
  }
}
