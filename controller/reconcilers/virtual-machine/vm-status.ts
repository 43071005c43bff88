// The VirtualMachine status a plan writes (decide.ts): the conditions, what is mirrored from the
// machine it runs on, and the record of where it runs (status.scheduled), kept in step with that
// machine. Pure.
import type { ScheduledPlacement, VirtualMachine, VirtualMachineStatus } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { copiedReason, findCondition, setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { pausedCondition } from '../paused.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { describePlacement, recordAgrees, recordRunning, sameResolved, type Placement, type RunningPlacement } from './placement.js';
import { mirrorInfraStatus, readyCondition } from './status-mirror.js';

/** An Event about the VM, recorded before the plan's writes (so one announcing a deletion precedes it). */
export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: Reason;
  readonly message: string;
}

/** The machine the VM runs on (a Present one it controls) and where that is. */
export interface Running {
  readonly machine: InfraMachine;
  readonly placement: RunningPlacement;
}

/** `status.scheduled` while `running` (or nothing) runs, and the Event when the record had to be restored from the machine. */
export function recordOf(
  vm: VirtualMachine,
  running: Running | undefined,
  now: Date,
): { readonly scheduled?: ScheduledPlacement; readonly events: readonly PlannedEvent[] } {
  const recorded = vm.status?.scheduled;
  if (!running) return { ...(recorded ? { scheduled: recorded } : {}), events: [] };
  return { scheduled: recordRunning(recorded, running.placement, since(running.machine, now)), events: restoredEvents(recorded, running) };
}

/** A Warning when `status.scheduled` does not say where the VM runs: someone else wrote it (or it was never written); it is restored, nothing moves. */
export function restoredEvents(recorded: ScheduledPlacement | undefined, running: Running | undefined): PlannedEvent[] {
  if (!running || recordAgrees(recorded, running.placement)) return [];
  const said = recorded ? describePlacement(recorded) : 'unset';
  const where = describePlacement(running.placement);
  const targets = recorded && said === where && recorded.providerClass === running.placement.providerClass ? ' with other class targets' : '';
  const message = `status.scheduled (${said}${targets}) does not match ${machineName(running.machine)}, which runs the VirtualMachine on ${where}: restored from the machine; the VirtualMachine is not moved`;
  return [{ type: 'Warning', reason: Reason.ScheduledRestored, message }];
}

export interface StatusInput {
  readonly scheduled: ConditionInput;
  readonly placementValid?: ConditionInput;
  readonly infra: InfraMachine | undefined;
  readonly infraKind: string;
  /** Overrides the computed Ready. */
  readonly ready?: ConditionInput;
}

export function statusFor(vm: VirtualMachine, now: Date, s: StatusInput): VirtualMachineStatus {
  const mirrored = mirrorInfraStatus(s.infra, s.infraKind ? { kind: s.infraKind, name: vm.metadata.name ?? '' } : undefined);
  const ready = s.ready ?? readyCondition(s.scheduled, s.placementValid, mirrored.infrastructureReady);
  const inputs: ConditionInput[] = [
    s.scheduled,
    ...(s.placementValid ? [s.placementValid] : []),
    mirrored.infrastructureReady,
    ready,
    pausedCondition(false, vm.metadata.generation),
  ];
  return {
    ...ownedStatus(vm),
    ...mirrored.fields,
    conditions: setConditions(vm.status?.conditions, inputs, now),
  };
}

/**
 * `status`, decided while the VM had no machine, once its pass has made that machine (or found it
 * made, the VM's): what the VM mirrors of `machine` as the API server returned it, and Ready from
 * that. The status the pass writes is so already true of what it made ("has no Ready condition
 * yet", not "does not exist yet"), and the pass that next sees the machine has nothing to add.
 */
export function withMachineMade(status: VirtualMachineStatus, machine: InfraMachine, now: Date): VirtualMachineStatus {
  const mirrored = mirrorInfraStatus(machine);
  const asInput = (type: ConditionType): ConditionInput | undefined => {
    const c = findCondition(status.conditions, type);
    return c && { type, status: c.status, reason: copiedReason(c), message: c.message };
  };
  const scheduled = asInput(ConditionType.Scheduled) ?? notScheduled(Reason.Scheduling, 'not scheduled yet');
  const ready = readyCondition(scheduled, asInput(ConditionType.PlacementValid), mirrored.infrastructureReady);
  return {
    ...status,
    ...mirrored.fields,
    conditions: setConditions(status.conditions, [mirrored.infrastructureReady, ready], now),
  };
}

/** The status fields kept as they are unless a branch sets them. */
export function ownedStatus(vm: VirtualMachine): VirtualMachineStatus {
  const { scheduled, infrastructureRef, heldAddresses: held } = vm.status ?? {};
  return { ...(scheduled ? { scheduled } : {}), ...(infrastructureRef ? { infrastructureRef } : {}), ...(held ? { heldAddresses: held } : {}) };
}

export function samePlacement(s: ScheduledPlacement, p: Placement): boolean {
  return (
    s.providerClass === p.providerClass &&
    s.providerName === p.providerName &&
    s.failureDomain === p.failureDomain.name &&
    sameResolved(s.resolvedStorage ?? [], p.resolvedStorage) &&
    sameResolved(s.resolvedNetworks ?? [], p.resolvedNetworks)
  );
}

/** When the machine's placement was chosen: when the machine was made. */
export function since(machine: InfraMachine, now: Date): Date {
  const created = machine.metadata.creationTimestamp;
  return created ? new Date(created) : now;
}

export const machineName = (m: InfraMachine): string => `${m.kind} ${m.metadata.name ?? ''}`;

export const placementMatches: ConditionInput = { type: ConditionType.PlacementValid, status: 'True', reason: Reason.PlacementMatches, message: '' };

export function notScheduled(reason: Reason, message: string): ConditionInput {
  return { type: ConditionType.Scheduled, status: 'False', reason, message };
}

export function notReady(reason: Reason, message: string): ConditionInput {
  return { type: ConditionType.Ready, status: 'False', reason, message };
}

export function current(vm: VirtualMachine, type: string): ConditionInput {
  const c = vm.status?.conditions?.find((x) => x.type === type);
  return c
    ? { type: c.type as ConditionInput['type'], status: c.status, reason: copiedReason(c), message: c.message }
    : notScheduled(Reason.Scheduling, 'not scheduled yet');
}
