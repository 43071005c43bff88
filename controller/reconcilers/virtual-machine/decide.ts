// The VirtualMachine decision: a pure function from what the reconciler
// observed to what it should do (STYLE §2 "How a reconciler reads"). Pause
// and deletion are branches here; the reconciler only carries the plan out.
//
// Ownership (issue 10, ownership.ts): an object of the VM's name that is not
// the VM's is reported and left alone, never written, deleted or referred to.
//
// Placement (issue 10, Build 7; placement.ts, drift.ts): where the VM runs is
// the infrastructure machine it controls, not `status.scheduled`, which
// anyone with access to the status subresource can write. The controller
// keeps that record in step with the machine: one that disagrees is
// rewritten from the machine, with a Warning Event, and nothing moves. Only a
// real drift (the machine's Provider, failure domain or class targets no
// longer what the scheduler would choose) deletes a machine, as the VM's
// migrationPolicy allows, and the plan that deletes it carries an Event
// the reconciler records first.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ScheduledPlacement, VirtualMachine, VirtualMachineStatus } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { INFRA_GROUP } from '../../../infra/api/kind.js';
import { Annotation, Finalizer } from '../../../infra/api/well-known.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { UserData } from '../../backends/user-data-bytes.js';
import { schedule } from '../../scheduler/schedule.js';
import { copiedReason, setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { isPaused, pausedCondition } from '../paused.js';
import { describeDrift, evaluateDrift, type DriftDecision, type DriftReason } from './drift.js';
import { computeEffectiveHardware } from './effective-hardware.js';
import { buildInfraMachine, type InfraMachineObject } from './infra-builders.js';
import {
  decideUserDataSecretWrite,
  infraConflict,
  markForeign,
  userDataSecretName,
  type InfraState,
  type RenderedSecretState,
  type UserDataSecretObject,
  type WriteConflict,
} from './ownership.js';
import {
  describePlacement,
  readResolvedClasses,
  recordAgrees,
  recordRunning,
  runningPlacement,
  sameResolved,
  toScheduledPlacement,
  type Placement,
  type RunningPlacement,
} from './placement.js';
import { findDuplicateAddress, heldAddresses, type SiblingAddresses } from './static-addresses.js';
import { mirrorInfraStatus, readyCondition } from './status-mirror.js';
import { renderUserDataSource, userDataVars } from './user-data.js';

/** The user-data source's value, as bytes (user-data-bytes.ts), or why it cannot be read. */
export type UserDataSource = { readonly ok: true; readonly content: UserData } | { readonly ok: false; readonly message: string };

export interface VmObserved {
  /** The backends this controller knows: their machine kinds and builders. */
  readonly backends: BackendCatalog;
  readonly vm: VirtualMachine;
  readonly vmClass?: VMClass;
  readonly image?: VMImage;
  /** Providers of the VM's namespace. */
  readonly providers: readonly Provider[];
  /** Other VMs of the namespace, for anti-affinity. */
  readonly siblings: readonly VirtualMachine[];
  /** Static addresses the other VMs hold or claimed first. */
  readonly siblingAddresses: readonly SiblingAddresses[];
  /** One entry per infrastructure machine kind. */
  readonly infra: readonly InfraState[];
  /** The raw user-data, when spec.userData is set. */
  readonly userData?: UserDataSource;
  /** The Secret the user-data is rendered into, when spec.userData is set. @default Absent */
  readonly renderedSecret?: RenderedSecretState;
}

/** An Event about the VM, recorded before the plan's writes (so one announcing a deletion precedes it). */
export interface PlannedEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: Reason;
  readonly message: string;
}

export interface VmPlan {
  readonly ensureFinalizer: boolean;
  readonly removeFinalizer: boolean;
  /** Objects the VM controls, to delete (each only while its uid is the one given). */
  readonly deleteInfra: readonly InfraMachineObject[];
  /** The infra machine to create, or (metadata.uid set) to update: it is the VM's. */
  readonly applyInfra?: InfraMachineObject;
  /** The rendered user-data Secret to create, or (metadata.uid set) to update; absent when the live one is already right. */
  readonly userDataSecret?: UserDataSecretObject;
  /** Events to record before anything is written or deleted. */
  readonly events: readonly PlannedEvent[];
  /** The status fields the controller owns; undefined: leave status alone. */
  readonly status?: VirtualMachineStatus;
  readonly requeueAfterMs?: number;
}

/** How soon a VM blocked by a conflict is looked at again (the reconciler's backoff starts there). */
export const RECHECK_MS = 60_000;
const WAIT_MS = 5_000;

export function decideVirtualMachine(observed: VmObserved, now: Date): VmPlan {
  const o = withForeignMarked(observed);
  const { vm } = o;
  if (isPaused(vm)) return pausedPlan(o, now);
  if (vm.metadata.deletionTimestamp) return deletionPlan(o);
  const ensureFinalizer = !(vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
  return { ...activePlan(o, now), ensureFinalizer };
}

/**
 * The status once applying met `conflict` (an object found in the way
 * between reading and writing, or a field another writer changed): the same
 * report as for a conflict seen before applying.
 */
export function decideWriteConflict(observed: VmObserved, conflict: WriteConflict, now: Date): Pick<VmPlan, 'status' | 'requeueAfterMs'> {
  return conflictPlan(withForeignMarked(observed), now, conflict);
}

function pausedPlan(o: VmObserved, now: Date): VmPlan {
  const conditions = setConditions(
    o.vm.status?.conditions,
    [pausedCondition(o.vm, o.vm.metadata.generation), { type: ConditionType.Ready, status: 'False', reason: Reason.Paused, message: 'Reconciliation is paused' }],
    now,
  );
  return { ...noAction, status: { ...ownedStatus(o.vm), conditions } };
}

function withForeignMarked(o: VmObserved): VmObserved {
  return { ...o, infra: markForeign(o.infra, o.vm) };
}

/** Delete every infra kind the VM controls, independently; release the VM only when all are gone (another's object is not waited for). */
function deletionPlan(o: VmObserved): VmPlan {
  const present = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const allGone = o.infra.every((i) => i.state === 'Absent' || i.state === 'Foreign');
  const holds = (o.vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
  return { ...noAction, deleteInfra: present, removeFinalizer: allGone && holds, ...(allGone ? {} : { requeueAfterMs: WAIT_MS }) };
}

const noAction: VmPlan = { ensureFinalizer: false, removeFinalizer: false, deleteInfra: [], events: [] };

type ActivePlan = Omit<VmPlan, 'ensureFinalizer'>;

interface Gate {
  readonly scheduled: ConditionInput;
  readonly ready?: ConditionInput;
  readonly requeueAfterMs?: number;
}

/** The machine the VM runs on (a Present one it controls) and where that is. */
interface Running {
  readonly machine: InfraMachineObject;
  readonly placement: RunningPlacement;
}

function activePlan(o: VmObserved, now: Date): ActivePlan {
  const { vm, vmClass, image } = o;
  if (!vmClass) return blocked(o, now, { scheduled: notScheduled(Reason.ClassNotFound, `spec.classRef.name "${vm.spec.classRef.name}" not found`) });
  if (!image) return blocked(o, now, { scheduled: notScheduled(Reason.ImageNotFound, `spec.imageRef.name "${vm.spec.imageRef.name}" not found`) });
  const hardware = computeEffectiveHardware(vm, vmClass);
  if (!hardware.ok) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, hardware.error.message) });
  const duplicate = findDuplicateAddress(vm, vmClass, o.siblingAddresses);
  if (duplicate) {
    const message = `address ${duplicate.address} on network class "${duplicate.networkClass}" (interface ${duplicate.interface}) is already held by VirtualMachine ${duplicate.heldBy}`;
    return blocked(o, now, { scheduled: current(o.vm, ConditionType.Scheduled), ready: notReady(Reason.DuplicateAddress, message) });
  }
  const result = schedule({ vm, vmClass, image, providers: o.providers, siblings: o.siblings });
  if (!result.ok) {
    // Nothing fits now: a VM that runs keeps running where it is.
    const running = runningOn(o);
    return running ? mirrorOnly(o, now, placementMatches, running) : blocked(o, now, { scheduled: notScheduled(result.reason, result.message), requeueAfterMs: RECHECK_MS });
  }
  const fresh = result.placement;
  const running = runningOn(o, { vmClass, image, placement: fresh });
  if (!running) return place(o, now, fresh, vmClass, image, undefined);
  const drift = evaluateDrift(vm, running.placement, fresh);
  if (drift.reason && drift.action !== 'InPlace') return driftPlan(o, now, { ...drift, reason: drift.reason }, running, fresh);
  const leftovers = otherKinds(o, running);
  if (leftovers.length > 0) return leftoverPlan(o, now, leftovers, running);
  return place(o, now, fresh, vmClass, image, running);
}

/**
 * The machine the VM runs on: a Present one it controls, of the fresh
 * placement's kind when there is one. Its class targets are read back only
 * at the fresh Provider and failure domain: elsewhere the Provider or
 * failure domain already differs.
 */
function runningOn(o: VmObserved, fresh?: { readonly vmClass: VMClass; readonly image: VMImage; readonly placement: Placement }): Running | undefined {
  const present = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const targetKind = fresh && o.backends.machineKind(fresh.placement.providerClass);
  const machine = present.find((m) => m.kind === targetKind) ?? present[0];
  if (!machine) return undefined;
  const placement = runningPlacement(machine, o.backends);
  const atFresh = fresh && placement.providerClass === fresh.placement.providerClass && placement.providerName === fresh.placement.providerName && placement.failureDomain === fresh.placement.failureDomain.name;
  if (!atFresh) return { machine, placement };
  return { machine, placement: { ...placement, ...readResolvedClasses(machine, { vm: o.vm, vmClass: fresh.vmClass, image: fresh.image, placement: fresh.placement }, o.backends) } };
}

/**
 * The VM runs where it no longer fits. `never` keeps it there; `manual` keeps
 * it and says so (PlacementValid False, a Warning Event when that begins)
 * until annotated; `automatic` (or `manual` annotated) deletes every machine
 * the VM controls, with a Warning Event recorded before the delete, and the
 * next pass creates it at the fresh placement.
 */
function driftPlan(o: VmObserved, now: Date, drift: DriftDecision & { readonly reason: DriftReason }, running: Running, fresh: Placement): ActivePlan {
  const what = describeDrift(drift.reason, running.placement, fresh);
  if (drift.action === 'StickToOld') return mirrorOnly(o, now, placementMatches, running);
  if (drift.action === 'SurfaceOnly') {
    const placementValid: ConditionInput = { type: ConditionType.PlacementValid, status: 'False', reason: drift.reason, message: `${what}; annotate ${Annotation.migrate}=true to move it` };
    const plan = mirrorOnly(o, now, placementValid, running);
    const already = o.vm.status?.conditions?.some((c) => c.type === ConditionType.PlacementValid && c.status === 'False' && c.reason === drift.reason);
    if (already) return plan;
    const message = `${what}: migrationPolicy manual keeps the VirtualMachine on ${describePlacement(running.placement)}; annotate ${Annotation.migrate}=true to recreate it on ${describePlacement(fresh)}`;
    return { ...plan, events: [...plan.events, { type: 'Warning', reason: drift.reason, message }] };
  }
  const stale = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const placementValid: ConditionInput = { type: ConditionType.PlacementValid, status: 'False', reason: drift.reason, message: `${what}; recreating` };
  const plan = mirrorOnly(o, now, placementValid, running);
  const policy = o.vm.spec.migrationPolicy === 'manual' ? `manual, ${Annotation.migrate}=true` : 'automatic';
  const message = `${what}: deleting ${machineName(running.machine)} to recreate the VirtualMachine on ${describePlacement(fresh)} (migrationPolicy ${policy})`;
  return { ...plan, events: [...plan.events, { type: 'Warning', reason: drift.reason, message }], deleteInfra: stale, requeueAfterMs: WAIT_MS };
}

/** Present machines of other kinds the VM controls, besides the one it runs on. */
function otherKinds(o: VmObserved, running: Running): InfraMachineObject[] {
  return o.infra.flatMap((i) => (i.state === 'Present' && i.kind !== running.machine.kind ? [i.object] : []));
}

/** A second machine of the VM, of another kind (not one banlieue makes: it deletes before it recreates), is deleted, said first. */
function leftoverPlan(o: VmObserved, now: Date, leftovers: readonly InfraMachineObject[], running: Running): ActivePlan {
  const on = `${machineName(running.machine)} on ${describePlacement(running.placement)}`;
  const placementValid: ConditionInput = { type: ConditionType.PlacementValid, status: 'False', reason: Reason.ProviderChanged, message: `the VirtualMachine runs as ${on}; deleting its other infrastructure machines` };
  const plan = mirrorOnly(o, now, placementValid, running);
  const events = leftovers.map((m): PlannedEvent => ({ type: 'Warning', reason: Reason.ProviderChanged, message: `deleting ${machineName(m)}: the VirtualMachine runs as ${on}` }));
  return { ...plan, events: [...plan.events, ...events], deleteInfra: leftovers, requeueAfterMs: WAIT_MS };
}

function place(o: VmObserved, now: Date, placement: Placement, vmClass: VMClass, image: VMImage, running: Running | undefined): ActivePlan {
  const { vm } = o;
  if (o.userData && !o.userData.ok) return blocked(o, now, { scheduled: notScheduled(Reason.UserDataNotFound, o.userData.message), requeueAfterMs: RECHECK_MS });
  const backend = o.backends.get(placement.providerClass);
  if (!backend) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, `providerClass "${placement.providerClass}" has no infrastructure machine kind`) });
  const targetKind = backend.api.machine.kind;
  const live = o.infra.find((i) => i.kind === targetKind);
  const foreign = live?.state === 'Foreign' ? infraConflict(live.object, vm) : undefined;
  if (foreign) return conflictPlan(o, now, foreign);
  if (live?.state === 'Terminating' || live?.state === 'Unknown') {
    return { ...mirrorOnly(o, now, placementMatches, running), requeueAfterMs: WAIT_MS };
  }
  const rendered = o.userData?.ok ? decideUserDataSecretWrite(vm, o.renderedSecret, renderUserDataSource(o.userData.content, userDataVars(vm, vmClass, backend.api.providerIDScheme))) : undefined;
  if (rendered && !rendered.ok) return conflictPlan(o, now, rendered.conflict);
  const built = buildInfraMachine({ vm, vmClass, image, placement, ...(rendered ? { userDataSecretName: userDataSecretName(vm) } : {}) }, o.backends);
  if (!built.ok) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, built.message) });
  const infra = live?.state === 'Present' ? live.object : undefined;
  const userDataSecret = rendered?.write;
  const scheduled: ConditionInput = { type: ConditionType.Scheduled, status: 'True', reason: Reason.Scheduled, message: describePlacement(placement) };
  const status = statusFor(o, now, { scheduled, placementValid: placementMatches, infra, infraKind: targetKind });
  const recorded = vm.status?.scheduled;
  return {
    ...noAction,
    // The uid makes the write an update of exactly the object judged ours.
    applyInfra: infra?.metadata.uid ? { ...built.object, metadata: { ...built.object.metadata, uid: infra.metadata.uid } } : built.object,
    ...(userDataSecret ? { userDataSecret } : {}),
    // Running here already (the machine agrees with the fresh placement): only a record that disagrees is news.
    events: restoredEvents(recorded, running),
    status: {
      ...status,
      scheduled: recorded && samePlacement(recorded, placement) ? recorded : toScheduledPlacement(placement, running ? since(running.machine, now) : now),
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: targetKind, name: vm.metadata.name ?? '' },
      heldAddresses: heldAddresses(vm, vmClass),
      ...(vm.metadata.generation !== undefined ? { observedGeneration: vm.metadata.generation } : {}),
    },
  };
}

/** An object in the VM's way is not the VM's: report it, write nothing, keep what the VM has; recheck (Secrets are not watched). */
function conflictPlan(o: VmObserved, now: Date, conflict: WriteConflict): ActivePlan {
  return blocked(o, now, { scheduled: notScheduled(conflict.reason, conflict.message), requeueAfterMs: RECHECK_MS });
}

/** Keep the current infra object and only mirror its status; the record of where it runs follows the machine. */
function mirrorOnly(o: VmObserved, now: Date, placementValid: ConditionInput, running: Running | undefined): ActivePlan {
  const live = running ? undefined : o.infra.find((i) => i.state === 'Terminating');
  const infra = running?.machine ?? (live && 'object' in live ? live.object : undefined);
  const record = recordOf(o.vm, running, now);
  const scheduled = record.scheduled
    ? { type: ConditionType.Scheduled, status: 'True' as const, reason: Reason.Scheduled, message: describePlacement(record.scheduled) }
    : notScheduled(Reason.Scheduling, 'not scheduled yet');
  const status = statusFor(o, now, { scheduled, placementValid, infra, infraKind: infra?.kind ?? o.vm.status?.infrastructureRef?.kind ?? '' });
  return { ...noAction, events: record.events, status: { ...status, ...(record.scheduled ? { scheduled: record.scheduled } : {}) } };
}

/** Nothing can be placed: report why, keep what exists (its record following the machine). */
function blocked(o: VmObserved, now: Date, gate: Gate): ActivePlan {
  const running = runningOn(o);
  const record = recordOf(o.vm, running, now);
  const status = statusFor(o, now, { scheduled: gate.scheduled, infra: running?.machine, infraKind: running?.machine.kind ?? '', ...(gate.ready ? { ready: gate.ready } : {}) });
  return { ...noAction, events: record.events, status: { ...status, ...(record.scheduled ? { scheduled: record.scheduled } : {}) }, ...(gate.requeueAfterMs ? { requeueAfterMs: gate.requeueAfterMs } : {}) };
}

/** `status.scheduled` while `running` (or nothing) runs, and the Event when the record had to be restored from the machine. */
function recordOf(vm: VirtualMachine, running: Running | undefined, now: Date): { readonly scheduled?: ScheduledPlacement; readonly events: readonly PlannedEvent[] } {
  const recorded = vm.status?.scheduled;
  if (!running) return { ...(recorded ? { scheduled: recorded } : {}), events: [] };
  return { scheduled: recordRunning(recorded, running.placement, since(running.machine, now)), events: restoredEvents(recorded, running) };
}

/** A Warning when `status.scheduled` does not say where the VM runs: someone else wrote it (or it was never written); it is restored, nothing moves. */
function restoredEvents(recorded: ScheduledPlacement | undefined, running: Running | undefined): PlannedEvent[] {
  if (!running || recordAgrees(recorded, running.placement)) return [];
  const said = recorded ? describePlacement(recorded) : 'unset';
  const where = describePlacement(running.placement);
  const targets = recorded && said === where && recorded.providerClass === running.placement.providerClass ? ' with other class targets' : '';
  const message = `status.scheduled (${said}${targets}) does not match ${machineName(running.machine)}, which runs the VirtualMachine on ${where}: restored from the machine; the VirtualMachine is not moved`;
  return [{ type: 'Warning', reason: Reason.ScheduledRestored, message }];
}

interface StatusInput {
  readonly scheduled: ConditionInput;
  readonly placementValid?: ConditionInput;
  readonly infra: InfraMachineObject | undefined;
  readonly infraKind: string;
  /** Overrides the computed Ready. */
  readonly ready?: ConditionInput;
}

function statusFor(o: VmObserved, now: Date, s: StatusInput): VirtualMachineStatus {
  const mirrored = mirrorInfraStatus(s.infra, s.infraKind ? { kind: s.infraKind, name: o.vm.metadata.name ?? '' } : undefined);
  const ready = s.ready ?? readyCondition(s.scheduled, s.placementValid, mirrored.infrastructureReady);
  const inputs: ConditionInput[] = [s.scheduled, ...(s.placementValid ? [s.placementValid] : []), mirrored.infrastructureReady, ready, pausedCondition(false, o.vm.metadata.generation)];
  return {
    ...ownedStatus(o.vm),
    ...(mirrored.initialization ? { initialization: mirrored.initialization } : {}),
    ...(mirrored.addresses ? { addresses: mirrored.addresses } : {}),
    ...(mirrored.observedPowerState ? { observedPowerState: mirrored.observedPowerState } : {}),
    conditions: setConditions(o.vm.status?.conditions, inputs, now),
  };
}

/** The status fields kept as they are unless a branch sets them. */
function ownedStatus(vm: VirtualMachine): VirtualMachineStatus {
  const { scheduled, infrastructureRef, heldAddresses: held } = vm.status ?? {};
  return { ...(scheduled ? { scheduled } : {}), ...(infrastructureRef ? { infrastructureRef } : {}), ...(held ? { heldAddresses: held } : {}) };
}

function samePlacement(s: ScheduledPlacement, p: Placement): boolean {
  return (
    s.providerClass === p.providerClass &&
    s.providerName === p.providerName &&
    s.failureDomain === p.failureDomain.name &&
    sameResolved(s.resolvedStorage ?? [], p.resolvedStorage) &&
    sameResolved(s.resolvedNetworks ?? [], p.resolvedNetworks)
  );
}

/** When the machine's placement was chosen: when the machine was made. */
function since(machine: InfraMachineObject, now: Date): Date {
  const created = machine.metadata.creationTimestamp;
  return created ? new Date(created) : now;
}

const machineName = (m: InfraMachineObject): string => `${m.kind} ${m.metadata.name ?? ''}`;

const placementMatches: ConditionInput = { type: ConditionType.PlacementValid, status: 'True', reason: Reason.PlacementMatches, message: '' };

function notScheduled(reason: Reason, message: string): ConditionInput {
  return { type: ConditionType.Scheduled, status: 'False', reason, message };
}

function notReady(reason: Reason, message: string): ConditionInput {
  return { type: ConditionType.Ready, status: 'False', reason, message };
}

function current(vm: VirtualMachine, type: string): ConditionInput {
  const c = vm.status?.conditions?.find((x) => x.type === type);
  return c ? { type: c.type as ConditionInput['type'], status: c.status, reason: copiedReason(c), message: c.message } : notScheduled(Reason.Scheduling, 'not scheduled yet');
}
