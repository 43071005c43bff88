// InfraMachine status from the outcome of one pass (pure). Fields other passes
// wrote (addresses, backend references) are kept when this pass learned
// nothing new, so a blocked pass never erases what is known.
import { MAX_ADDRESSES, type PowerState, type RestartStatus } from '../../../infra/api/machine-fields.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type {
  InfraMachineContractSpec,
  InfraMachineContractStatus,
  MachinePlacementRecord,
} from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { MachineObservation } from '../../backends/backend.js';
import { setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { pausedCondition, type Pausable } from '../paused.js';
import { isRestarting, restartingMessage } from './restart.js';

/** The status every InfraMachine kind shares (the contract fields), plus backend fields. */
export type InfraMachineStatus = InfraMachineContractStatus & { [backendField: string]: unknown };

/** InfraMachines pause by annotation or by their CAPI Cluster only: the contract has no spec.paused. */
export interface StatusSubject {
  readonly metadata: Pausable['metadata'];
  readonly spec: Pick<InfraMachineContractSpec, 'desiredPowerState'>;
  readonly status?: InfraMachineStatus;
}

export type PassOutcome =
  /** `pausedCluster`: the owning CAPI Cluster, when its spec.paused is what pauses the machine. */
  | { readonly kind: 'paused'; readonly pausedCluster?: string }
  /**
   * Something the pass needed is missing or refused; nothing changed on the
   * backend. `taskEnded`: the remembered task is over (failed or forgotten), so
   * status.taskRef goes and the next pass may start anew.
   */
  | { readonly kind: 'blocked'; readonly reason: Reason; readonly message: string; readonly taskEnded?: boolean }
  /**
   * The backend is about to be asked to create the VM: where is recorded first (status.placement),
   * so that no later pass, and no deletion, looks for it anywhere else.
   */
  | { readonly kind: 'placing'; readonly placement: MachinePlacementRecord }
  /**
   * A backend task runs (creating the VM, or a power-off: `reason`, default Provisioning, or Restarting
   * within a restart); it is remembered in status.taskRef. `restart`: status.restart after the pass (restart.ts).
   */
  | {
      readonly kind: 'inProgress';
      readonly taskRef: string;
      readonly message: string;
      readonly placement: MachinePlacementRecord;
      readonly reason?: Reason;
      readonly restart?: RestartStatus;
    }
  /** The machine is being deleted and its VM removed (`reason`, default Deleting: what the backend awaits). */
  | { readonly kind: 'deleting'; readonly message: string; readonly reason?: Reason }
  /** The backend was reached: the VM as found (undefined: gone since it was provisioned). */
  | {
      readonly kind: 'observed';
      readonly observation: MachineObservation | undefined;
      /** Where the VM is (recorded before it was created, or now for a machine provisioned before records). */
      readonly placement: MachinePlacementRecord;
      /** The machine names another place than where the VM was created (placement.ts describePlacementChange). */
      readonly placementChange?: string;
      /** Backend-specific status fields, e.g. vmRef. */
      readonly backendStatus: Readonly<Record<string, string | number>>;
      readonly uuid: string;
      /** status.restart after the pass, when a restart request changed it (restart.ts). */
      readonly restart?: RestartStatus;
    };

/**
 * How soon to read a running backend task again: a task this pass started (the machine
 * remembered none) after a quarter of `minMs` (a linked clone is often done by then), then
 * every half `minMs` while it is young, then a quarter of the time it has run so far, at most
 * `5 × minMs`. A clone of minutes is read a few times, not every second (fifty of them would
 * keep every worker busy); how long it has run is read from when Ready became Provisioning.
 */
export function taskPollDelay(status: InfraMachineStatus | undefined, now: Date, minMs: number): number {
  if (status?.taskRef === undefined) return Math.round(minMs / 4);
  const ready = status.conditions?.find((c) => c.type === ConditionType.Ready);
  const elapsed = ready?.reason === Reason.Provisioning ? now.getTime() - Date.parse(ready.lastTransitionTime) : NaN;
  if (Number.isNaN(elapsed)) return minMs;
  return Math.min(Math.max(Math.round(minMs / 2), Math.round(elapsed / 4)), 5 * minMs);
}

/**
 * Whether Ready already tells a deletion's progress: a reason only deletion passes write, or
 * Stopping (a graceful power-off a backend awaits before destroying). A deletion pass writes
 * Deleting first unless it does, so a long deletion flips no condition back and forth.
 */
export function isDeletionReported(status: InfraMachineStatus | undefined): boolean {
  const reason = status?.conditions?.find((c) => c.type === ConditionType.Ready)?.reason;
  return reason === Reason.Deleting || reason === Reason.DeletionFailed || reason === Reason.Stopping;
}

export function isProvisioned(machine: { readonly status?: InfraMachineStatus }): boolean {
  return machine.status?.initialization?.provisioned === true;
}

/**
 * Whether a backend may hold a VM of this machine: its creation was recorded (status.placement,
 * written before any create), a create task was remembered, or it was provisioned (by a version
 * that kept no record). Otherwise provably nothing was created, and a deletion that cannot
 * reach a backend has nothing to wait for.
 */
export function mayHaveCreated(machine: { readonly status?: InfraMachineStatus }): boolean {
  const status = machine.status;
  return status?.placement !== undefined || status?.taskRef !== undefined || isProvisioned(machine);
}

export function decideMachineStatus(machine: StatusSubject, outcome: PassOutcome, now: Date): InfraMachineStatus {
  const current: InfraMachineStatus = { ...machine.status };
  const generation = machine.metadata.generation;
  const paused = pausedCondition({ metadata: machine.metadata }, generation, outcome.kind === 'paused' ? outcome.pausedCluster : undefined);
  if (outcome.kind === 'paused') return { ...current, conditions: setConditions(current.conditions, [paused], now) };
  if (outcome.kind === 'blocked') {
    const ready: ConditionInput = { type: ConditionType.Ready, status: 'False', reason: outcome.reason, message: outcome.message };
    const kept = outcome.taskEnded ? withoutTask(current) : current;
    return { ...kept, conditions: setConditions(current.conditions, [ready, paused], now) };
  }
  if (outcome.kind === 'deleting') {
    const ready: ConditionInput = { type: ConditionType.Ready, status: 'False', reason: outcome.reason ?? Reason.Deleting, message: outcome.message };
    return { ...current, conditions: setConditions(current.conditions, [ready, paused], now) };
  }
  if (outcome.kind === 'placing') return placingStatus(current, outcome.placement, paused, now);
  if (outcome.kind === 'inProgress') return inProgressStatus(current, outcome, paused, now);
  const desired = machine.spec.desiredPowerState ?? 'PoweredOn';
  const { observation } = outcome;
  // A spec change still pending on the backend (e.g. CPUs until a power-off) is not yet observed: the next pass retries it.
  // A spec naming another place is not applied, and not said to be (never pretend); nor a restart under way.
  const restarting = isRestarting(outcome.restart);
  const converged = outcome.observation?.pending === undefined && outcome.placementChange === undefined && !restarting;
  const status: InfraMachineStatus = {
    ...withoutTask(current),
    ...outcome.backendStatus,
    ...(outcome.restart ? { restart: outcome.restart } : {}),
    placement: outcome.placement,
    failureDomain: outcome.placement.failureDomain,
    ...(generation !== undefined && converged ? { observedGeneration: generation } : {}),
  };
  if (!observation) {
    const ready: ConditionInput = {
      type: ConditionType.Ready,
      status: 'False',
      reason: Reason.BackendMissing,
      message: `the VM with UUID ${outcome.uuid} no longer exists on the backend; it is not re-created: delete this machine to replace it`,
    };
    // Nothing to advertise for a VM that is gone.
    const { observedPowerState: _gone, ...rest } = status;
    return { ...rest, ...(current.addresses ? { addresses: [] } : {}), conditions: setConditions(current.conditions, [ready, paused], now) };
  }
  status.initialization = { provisioned: true };
  status.observedPowerState = observation.powerState;
  // The first ones (primary first): a guest may report more than a status holds, and a refused status says nothing.
  status.addresses = observation.addresses.slice(0, MAX_ADDRESSES);
  const ready: ConditionInput = outcome.placementChange
    ? { type: ConditionType.Ready, status: 'False', reason: Reason.PlacementChanged, message: outcome.placementChange }
    : readyFor(observation, desired, outcome.restart);
  return { ...status, conditions: setConditions(current.conditions, [ready, paused], now) };
}

/**
 * Where the VM is about to be created, recorded before the backend is asked. A machine that has
 * said nothing yet says nothing more now (no Ready, no failureDomain: CAPI mirrors both onto its
 * Machine, one more write there for every Machine): the create's own status follows at once and
 * says it all; one that said why it waited says it no longer does.
 */
function placingStatus(current: InfraMachineStatus, placement: MachinePlacementRecord, paused: ConditionInput, now: Date): InfraMachineStatus {
  const said = current.conditions?.some((c) => c.type === ConditionType.Ready) === true;
  if (!said) return { ...current, placement, conditions: setConditions(current.conditions, [paused], now) };
  const ready: ConditionInput = {
    type: ConditionType.Ready,
    status: 'False',
    reason: Reason.Provisioning,
    message: `creating the VM on ${placement.provider}/${placement.failureDomain}`,
  };
  return { ...current, placement, failureDomain: placement.failureDomain, conditions: setConditions(current.conditions, [ready, paused], now) };
}

/** A backend task runs: it is remembered in status.taskRef, and Ready says what it does. */
function inProgressStatus(
  current: InfraMachineStatus,
  outcome: Extract<PassOutcome, { kind: 'inProgress' }>,
  paused: ConditionInput,
  now: Date,
): InfraMachineStatus {
  const reason = outcome.reason ?? (isRestarting(outcome.restart) ? Reason.Restarting : Reason.Provisioning);
  const ready: ConditionInput = { type: ConditionType.Ready, status: 'False', reason, message: outcome.message };
  const { placement } = outcome;
  return {
    ...current,
    ...(outcome.restart ? { restart: outcome.restart } : {}),
    taskRef: outcome.taskRef,
    placement,
    failureDomain: placement.failureDomain,
    conditions: setConditions(current.conditions, [ready, paused], now),
  };
}

function readyFor(observation: MachineObservation, desired: PowerState, restart: RestartStatus | undefined): ConditionInput {
  if (restart && isRestarting(restart)) return { type: ConditionType.Ready, status: 'False', reason: Reason.Restarting, message: restartingMessage(restart) };
  if (observation.powerState !== desired) {
    return { type: ConditionType.Ready, status: 'False', reason: Reason.Pending, message: `the VM is ${observation.powerState}, to be ${desired}` };
  }
  if (desired === 'PoweredOn' && observation.addresses.length === 0 && observation.withoutNetwork !== true) {
    return {
      type: ConditionType.Ready,
      status: 'False',
      reason: Reason.WaitingForAddress,
      message: 'powered on; waiting for the guest to report an IP address',
    };
  }
  return { type: ConditionType.Ready, status: 'True', reason: Reason.Reconciled, message: observation.pending ?? '' };
}

/** The status without taskRef: the task is over (its VM found, or the task failed or was forgotten). */
function withoutTask(status: InfraMachineStatus): InfraMachineStatus {
  const { taskRef: _done, ...rest } = status;
  return rest;
}
