// What the VirtualMachine status copies from its infra machine, and the VM
// Ready summary (upstream §2.4 "status mirror"). Pure: conditions are returned
// as inputs for runtime/conditions.setConditions, which owns transition times.
import type { Condition } from '../../../infra/api/meta.js';
import type { MachineAddress, MachineInitializationStatus, PowerState, RestartStatus } from '../../../infra/api/machine-fields.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type { Static } from '../../../infra/api/schema.js';
import { copiedReason, findCondition, type ConditionInput } from '../../runtime/conditions.js';

/** The part of any infra machine kind the mirror reads (machineStatusFields). */
export interface InfraMachineRead {
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly deletionTimestamp?: unknown };
  readonly status?: {
    readonly initialization?: Static<typeof MachineInitializationStatus>;
    readonly addresses?: readonly MachineAddress[];
    readonly observedPowerState?: PowerState;
    readonly restart?: RestartStatus;
    readonly conditions?: readonly Condition[];
  };
}

/** The status fields a VM copies from its machine as they are. */
export interface MirroredFields {
  readonly initialization?: Static<typeof MachineInitializationStatus>;
  readonly addresses?: MachineAddress[];
  readonly observedPowerState?: PowerState;
  /** How far the last restart request went (spec.restartRequestedAt, copied to the machine). */
  readonly restart?: RestartStatus;
}

export interface MirroredStatus {
  readonly fields: MirroredFields;
  readonly infrastructureReady: ConditionInput;
}

/** Kind and name of the infra machine the VM expects, for messages while it is absent. */
export interface ExpectedInfra {
  readonly kind: string;
  readonly name: string;
}

/**
 * The infra status fields the VM copies, and InfrastructureReady from the
 * infra Ready condition (False/Pending while there is none).
 */
export function mirrorInfraStatus(infra: InfraMachineRead | undefined, expected?: ExpectedInfra): MirroredStatus {
  if (!infra) {
    const what = expected ? `${expected.kind} ${expected.name}` : 'The infrastructure object';
    return { fields: {}, infrastructureReady: pending(`${what} does not exist yet`) };
  }
  const { initialization, addresses, observedPowerState, restart, conditions } = infra.status ?? {};
  const ready = findCondition(conditions, ConditionType.Ready);
  return {
    fields: {
      ...(initialization !== undefined ? { initialization: { ...initialization } } : {}),
      ...(addresses !== undefined ? { addresses: addresses.map((a) => ({ ...a })) } : {}),
      ...(observedPowerState !== undefined ? { observedPowerState } : {}),
      ...(restart !== undefined ? { restart: { ...restart } } : {}),
    },
    infrastructureReady: ready
      ? { type: ConditionType.InfrastructureReady, status: ready.status, reason: copiedReason(ready), message: ready.message }
      : pending(`${infra.kind} ${infra.metadata.name ?? ''} has no Ready condition yet`),
  };
}

/**
 * A provisioning machine's status moves through several steps within seconds
 * (created, configured, powered on, an address), and the VM mirrors each: one
 * VM status write per step. Steps that settle nothing are folded into one VM
 * pass this long after the first, so a burst of new VMs does not multiply the
 * status writes an already saturated API server must take.
 */
export const MIRROR_COALESCE_MS = 1_000;

/** A machine change its VM acts on at once: it becomes Ready or stops being Ready, or its deletion starts. */
export function mirrorsAtOnce(machine: InfraMachineRead, old: InfraMachineRead | undefined): boolean {
  const ready = (m: InfraMachineRead | undefined): boolean => findCondition(m?.status?.conditions, ConditionType.Ready)?.status === 'True';
  const deleting = (m: InfraMachineRead | undefined): boolean => m?.metadata.deletionTimestamp !== undefined;
  return ready(machine) !== ready(old) || deleting(machine) !== deleting(old);
}

function pending(message: string): ConditionInput {
  return { type: ConditionType.InfrastructureReady, status: 'False', reason: Reason.Pending, message };
}

/**
 * VM Ready = Scheduled && PlacementValid is not False && InfrastructureReady;
 * when False, the reason names the first gate that fails.
 */
export function readyCondition(scheduled: ConditionInput, placementValid: ConditionInput | undefined, infrastructureReady: ConditionInput): ConditionInput {
  if (scheduled.status !== 'True') return notReady(Reason.Scheduling, 'Not scheduled', scheduled);
  if (placementValid?.status === 'False') return notReady(Reason.PlacementInvalid, 'Placement no longer valid', placementValid);
  if (infrastructureReady.status !== 'True') {
    return notReady(Reason.InfrastructureNotReady, 'Infrastructure not ready', infrastructureReady);
  }
  return { type: ConditionType.Ready, status: 'True', reason: Reason.Reconciled, message: '' };
}

function notReady(reason: Reason, summary: string, cause: ConditionInput): ConditionInput {
  return {
    type: ConditionType.Ready,
    status: 'False',
    reason,
    message: cause.message ? `${summary}: ${cause.message}` : `${summary} (${cause.reason})`,
  };
}
