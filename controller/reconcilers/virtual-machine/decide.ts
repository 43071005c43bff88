// The VirtualMachine decision: a pure function from what the reconciler
// observed to what it should do (STYLE §2 "How a reconciler reads"). Pause
// and deletion are branches here; the reconciler only carries the plan out.
//
// Ownership (ownership.ts): an object of the VM's name that is not
// the VM's is reported and left alone, never written, deleted or referred to.
//
// Placement (placement.ts, scheduler/running-placement.ts, drift.ts): a VM
// that runs stays where it runs while that is possible. Where it runs is the
// infrastructure machine it controls, never `status.scheduled`, which anyone
// with access to the status subresource can write: a record that disagrees is
// rewritten from the machine, with a Warning Event, and nothing moves. Only a
// placement that is truly impossible may move it, as its migrationPolicy
// allows, announced before its machine is deleted.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { DeletionPolicy } from '../../../infra/api/machine-fields.js';
import type { VirtualMachine, VirtualMachineStatus } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { INFRA_GROUP } from '../../../infra/api/kind.js';
import { Annotation, Finalizer } from '../../../infra/api/well-known.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { UserData } from '../../backends/user-data-bytes.js';
import { judgeRunningPlacement, type RunningFacts, type RunningVerdict } from '../../scheduler/running-placement.js';
import { compareText } from '../../scheduler/compare-text.js';
import { schedule, type ScheduleInput } from '../../scheduler/schedule.js';
import { setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { isPaused, pausedCondition } from '../paused.js';
import { decideMove, type RecreateBudget } from './drift.js';
import { computeEffectiveHardware } from '../../scheduler/effective-hardware.js';
import { buildInfraMachine, type InfraBuildInput } from './infra-builders.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
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
import { describePlacement, keptPlacement, placementSpecDigest, runningPlacement, toScheduledPlacement, type Placement } from './placement.js';
import { findDuplicateAddress, heldAddresses, type SiblingAddresses } from './static-addresses.js';
import {
  current,
  machineName,
  notReady,
  notScheduled,
  ownedStatus,
  placementMatches,
  recordOf,
  restoredEvents,
  samePlacement,
  since,
  statusFor,
  type PlannedEvent,
  type Running,
} from './vm-status.js';
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
  /**
   * Other VMs of the namespace, for anti-affinity, topology spread and the room they take: read
   * when the decision needs them (to place the VM, or to judge where it runs), not on every pass.
   */
  readonly siblings: () => readonly VirtualMachine[];
  /** VMClasses by name (what the siblings take from a failure domain). @default none known */
  readonly classOf?: (name: string) => VMClass | undefined;
  /** Where this process placed the VM and the caches do not show yet (ADR 11): kept while it fits. */
  readonly decided?: ScheduleInput['decided'];
  /** Static addresses the other VMs hold or claimed first. */
  readonly siblingAddresses: readonly SiblingAddresses[];
  /** One entry per infrastructure machine kind. */
  readonly infra: readonly InfraState[];
  /** The raw user-data, when spec.userData is set. */
  readonly userData?: UserDataSource;
  /** The Secret the user-data is rendered into, when spec.userData is set. @default Absent */
  readonly renderedSecret?: RenderedSecretState;
  /** Recreates the VM's namespace may still start; unset: no limit. */
  readonly recreateBudget?: RecreateBudget;
}

export interface VmPlan {
  readonly ensureFinalizer: boolean;
  readonly removeFinalizer: boolean;
  /** Objects the VM controls, to delete (each only while its uid is the one given). */
  readonly deleteInfra: readonly InfraMachine[];
  /** Machines the VM controls whose spec.deletionPolicy is to be set before they are deleted. */
  readonly setDeletionPolicy?: readonly { readonly machine: InfraMachine; readonly deletionPolicy: DeletionPolicy }[];
  /** The infra machine to create, or (metadata.uid set) to update: it is the VM's. */
  readonly applyInfra?: InfraMachine;
  /** The rendered user-data Secret to create, or (metadata.uid set) to update; absent when the live one is already right. */
  readonly userDataSecret?: UserDataSecretObject;
  /** Events to record before anything is written or deleted. */
  readonly events: readonly PlannedEvent[];
  /** The status fields the controller owns; undefined: leave status alone. */
  readonly status?: VirtualMachineStatus;
  readonly requeueAfterMs?: number;
  /** This plan announces a recreate: one of the namespace's recreates per minute is taken. */
  readonly takesRecreate?: boolean;
}

/** The garbage collector's finalizer on an object deleted with propagationPolicy Orphan. */
const ORPHAN_FINALIZER = 'orphan';

/** How soon a VM blocked by a conflict is looked at again (the reconciler's backoff starts there). */
export const RECHECK_MS = 60_000;
const WAIT_MS = 5_000;

export function decideVirtualMachine(observed: VmObserved, now: Date): VmPlan {
  const o = withForeignMarked(observed);
  const { vm } = o;
  if (isPaused(vm)) return pausedPlan(o, now);
  if (vm.metadata.deletionTimestamp) return deletionPlan(o);
  return { ...activePlan(o, now), ensureFinalizer: needsFinalizer(vm) };
}

/** Whether `vm` still lacks the finalizer a VM neither paused nor being deleted gets before anything is written for it. */
export function needsFinalizer(vm: VirtualMachine): boolean {
  return !isPaused(vm) && !vm.metadata.deletionTimestamp && !(vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
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
    [
      pausedCondition(o.vm, o.vm.metadata.generation),
      { type: ConditionType.Ready, status: 'False', reason: Reason.Paused, message: 'Reconciliation is paused' },
    ],
    now,
  );
  return { ...noAction, status: { ...ownedStatus(o.vm), conditions } };
}

function withForeignMarked(o: VmObserved): VmObserved {
  return { ...o, infra: markForeign(o.infra, o.vm) };
}

/**
 * Delete every infra kind the VM controls, independently; release the VM only when all are gone
 * (another's object is not waited for). A machine first gets the VM's spec.deletionPolicy, should
 * it not carry it yet (set just before the delete): Retain must reach the provider before the delete.
 */
function deletionPlan(o: VmObserved): VmPlan {
  const holds = (o.vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
  // `--cascade=orphan`: the garbage collector lets the machines go (then they are not the VM's); nothing is deleted.
  if ((o.vm.metadata.finalizers ?? []).includes(ORPHAN_FINALIZER)) return { ...noAction, requeueAfterMs: WAIT_MS };
  const present = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const policy = o.vm.spec.deletionPolicy ?? 'Delete';
  const behind = present.filter((m) => (m.spec.deletionPolicy ?? 'Delete') !== policy);
  const allGone = o.infra.every((i) => i.state === 'Absent' || i.state === 'Foreign');
  if (behind.length > 0) return { ...noAction, setDeletionPolicy: behind.map((machine) => ({ machine, deletionPolicy: policy })), requeueAfterMs: WAIT_MS };
  // A machine already being deleted waits for its provider: neither its delete nor its Event is sent again.
  const toDelete = present.filter((m) => !m.metadata.deletionTimestamp);
  const retained =
    policy === 'Retain'
      ? toDelete.map((m): PlannedEvent => ({
          type: 'Normal',
          reason: Reason.VMRetained,
          message: `deletionPolicy Retain: ${machineName(m)} is deleted and its VM is left on the backend, no longer managed by banlieue (its provider names it in an Event on ${machineName(m)})`,
        }))
      : [];
  return { ...noAction, events: retained, deleteInfra: toDelete, removeFinalizer: allGone && holds, ...(allGone ? {} : { requeueAfterMs: WAIT_MS }) };
}

const noAction: VmPlan = { ensureFinalizer: false, removeFinalizer: false, deleteInfra: [], events: [] };

type ActivePlan = Omit<VmPlan, 'ensureFinalizer'>;

interface Gate {
  readonly scheduled: ConditionInput;
  readonly ready?: ConditionInput;
  readonly requeueAfterMs?: number;
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
  const running = runningOn(o);
  if (!running) {
    const result = schedule({ vm, vmClass, image, ...scheduleContext(o) });
    if (!result.ok) return blocked(o, now, { scheduled: notScheduled(result.reason, result.message), requeueAfterMs: RECHECK_MS });
    return place(o, now, { placement: result.placement, vmClass, image });
  }
  const others = otherKinds(o, running);
  if (others.length > 0) return severalMachinesPlan(o, now, others, running);
  const verdict = judgeRunningPlacement({ vm, running: runningFacts(vm, running), providers: o.providers, siblings: o.siblings });
  if (!verdict.stays) return movePlan(o, now, verdict, running, { vmClass, image });
  const placementValid: ConditionInput = verdict.withdrawn
    ? { type: ConditionType.PlacementValid, status: 'True', reason: Reason.FailureDomainWithdrawn, message: verdict.withdrawn }
    : placementMatches;
  const kept = keptPlacement(running.machine, verdict.provider, verdict.failureDomain, vmClass, o.backends);
  if (!kept) return mirrorOnly(o, now, placementValid, running);
  // A withdrawn failure domain's labels are unknown, so its machine keeps the placement it was judged for.
  const judgedFor = verdict.failureDomain ? undefined : running.machine.metadata.annotations?.[Annotation.placementSpec];
  return place(o, now, {
    placement: kept.placement,
    vmClass,
    image,
    running,
    placementValid,
    ...(kept.imageRef !== undefined ? { imageRef: kept.imageRef } : {}),
    ...(judgedFor !== undefined ? { placementSpec: judgedFor } : {}),
  });
}

/** What the scheduler reads besides the VM, its class and image. */
function scheduleContext(o: VmObserved): Omit<ScheduleInput, 'vm' | 'vmClass' | 'image'> {
  return { providers: o.providers, siblings: o.siblings(), ...(o.classOf ? { classOf: o.classOf } : {}), ...(o.decided ? { decided: o.decided } : {}) };
}

/**
 * The machine the VM runs on and where that is: a Present one it controls; of several (a state
 * banlieue does not make), one on a Provider of its backend that exists, then the oldest, then by kind.
 */
function runningOn(o: VmObserved): Running | undefined {
  const present = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const served = (m: InfraMachine): boolean =>
    o.providers.some((p) => p.metadata.name === m.spec.providerRef?.name && o.backends.machineKind(p.spec.providerClassRef.name) === m.kind);
  const onKnownProvider = (m: InfraMachine): number => (served(m) ? 0 : 1);
  const [machine] = present.sort(
    (a, b) =>
      onKnownProvider(a) - onKnownProvider(b) ||
      compareText(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') ||
      compareText(a.kind, b.kind),
  );
  return machine && { machine, placement: runningPlacement(machine, o.backends, o.vmClass) };
}

/** Reasons a machine's Ready gives when it cannot reach its backend. */
const UNREACHABLE: ReadonlySet<string> = new Set([Reason.ConnectFailed, Reason.ProviderNotFound]);

/** What the scheduler judges a running VM by: where its machine is, what that machine reports, and whether spec.placement changed since. */
function runningFacts(vm: VirtualMachine, running: Running): RunningFacts {
  const ready = running.machine.status?.conditions?.find((c) => c.type === ConditionType.Ready);
  const unreachable = ready?.status === 'False' && UNREACHABLE.has(ready.reason) ? { reason: ready.reason, message: ready.message } : undefined;
  const placedFor = running.machine.metadata.annotations?.[Annotation.placementSpec];
  return {
    providerName: running.placement.providerName,
    failureDomain: running.placement.failureDomain,
    ...(unreachable ? { unreachable } : {}),
    placementChanged: placedFor !== undefined && placedFor !== placementSpecDigest(vm),
  };
}

/**
 * The VM runs where it can no longer stay: its migrationPolicy says whether it
 * stays (PlacementValid False saying why) or is recreated where the scheduler
 * puts it now (drift.ts: announced first, then its machines deleted; the next
 * pass places it afresh).
 */
function movePlan(
  o: VmObserved,
  now: Date,
  verdict: Extract<RunningVerdict, { stays: false }>,
  running: Running,
  { vmClass, image }: { readonly vmClass: VMClass; readonly image: VMImage },
): ActivePlan {
  const result = schedule({ vm: o.vm, vmClass, image, ...scheduleContext(o) });
  const move = decideMove({
    vm: o.vm,
    impossible: verdict,
    from: describePlacement(running.placement),
    to: result.ok ? { ok: true, where: describePlacement(result.placement) } : { ok: false, message: result.message },
    machine: machineName(running.machine),
    ...(o.recreateBudget ? { budget: o.recreateBudget } : {}),
    now,
  });
  const plan = mirrorOnly(o, now, move.placementValid, running);
  const events: PlannedEvent[] = [...plan.events, ...(move.event ? [{ type: 'Warning' as const, ...move.event }] : [])];
  const stale = move.deleteMachines ? o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : [])) : [];
  const requeueAfterMs = move.deleteMachines ? WAIT_MS : move.requeueAfterMs;
  return {
    ...plan,
    events,
    deleteInfra: stale,
    ...(move.takesRecreate ? { takesRecreate: true } : {}),
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
  };
}

/** Present machines of other kinds the VM controls, besides the one it runs on. */
function otherKinds(o: VmObserved, running: Running): InfraMachine[] {
  return o.infra.flatMap((i) => (i.state === 'Present' && i.kind !== running.machine.kind ? [i.object] : []));
}

/**
 * The VM controls machines of several kinds. banlieue makes one (a recreate deletes before it
 * creates), so someone else made another: each may carry a VM, and which one matters is theirs to
 * say. Nothing is deleted; the VM mirrors the one it is taken to run on and says which others to delete.
 */
function severalMachinesPlan(o: VmObserved, now: Date, others: readonly InfraMachine[], running: Running): ActivePlan {
  const names = others.map(machineName).join(', ');
  const message = `the VirtualMachine controls ${machineName(running.machine)} on ${describePlacement(running.placement)} and also ${names}: delete the one that is not wanted (its VM is deleted with it)`;
  const placementValid: ConditionInput = { type: ConditionType.PlacementValid, status: 'False', reason: Reason.SeveralMachines, message };
  const plan = mirrorOnly(o, now, placementValid, running);
  const begins = o.vm.status?.conditions?.find((c) => c.type === ConditionType.PlacementValid)?.reason !== Reason.SeveralMachines;
  return { ...plan, events: [...plan.events, ...(begins ? [{ type: 'Warning' as const, reason: Reason.SeveralMachines, message }] : [])] };
}

/** Where and with what the VM's machine is built: a fresh placement, or (running set) the one it runs at. */
interface PlaceInput {
  readonly placement: Placement;
  readonly vmClass: VMClass;
  readonly image: VMImage;
  readonly running?: Running;
  /** @default PlacementMatches */
  readonly placementValid?: ConditionInput;
  /** The image reference the running machine carries. */
  readonly imageRef?: string;
  /** Annotation.placementSpec to keep instead of the VM's current digest. */
  readonly placementSpec?: string;
}

/**
 * Build the VM's machine at `input.placement`: in order, what stops it (user-data unreadable, no
 * machine kind for the class, a machine in the way, a Secret not the VM's, a build failure), then
 * the machine and user-data Secret to write with the status that says where the VM is.
 */
function place(o: VmObserved, now: Date, input: PlaceInput): ActivePlan {
  const { vm } = o;
  const placementValid = input.placementValid ?? placementMatches;
  if (o.userData && !o.userData.ok)
    return blocked(o, now, { scheduled: notScheduled(Reason.UserDataNotFound, o.userData.message), requeueAfterMs: RECHECK_MS });
  const backend = o.backends.get(input.placement.providerClass);
  if (!backend)
    return blocked(o, now, {
      scheduled: notScheduled(Reason.InfraBuildFailed, `providerClass "${input.placement.providerClass}" has no infrastructure machine kind`),
    });
  const targetKind = backend.api.machine.kind;
  const live = o.infra.find((i) => i.kind === targetKind);
  const inTheWay = machineInTheWay(o, now, live, placementValid, input.running);
  if (inTheWay) return inTheWay;
  const rendered = o.userData?.ok
    ? decideUserDataSecretWrite(vm, o.renderedSecret, renderUserDataSource(o.userData.content, userDataVars(vm, input.vmClass, backend.api.providerIDScheme)))
    : undefined;
  if (rendered && !rendered.ok) return conflictPlan(o, now, rendered.conflict);
  const built = buildInfraMachine(toInfraBuildInput(vm, input, rendered !== undefined), o.backends);
  if (!built.ok) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, built.message) });
  return placedPlan(o, now, input, {
    targetKind,
    placementValid,
    infra: live?.state === 'Present' ? live.object : undefined,
    built: built.object,
    userDataSecret: rendered?.write,
  });
}

/**
 * The plan while the VM's live machine of the target kind stops it being written: one not the VM's
 * (a conflict), or one terminating or unreadable (wait for it, mirroring what there is); otherwise undefined.
 */
function machineInTheWay(
  o: VmObserved,
  now: Date,
  live: InfraState | undefined,
  placementValid: ConditionInput,
  running: Running | undefined,
): ActivePlan | undefined {
  const { vm } = o;
  const foreign = live?.state === 'Foreign' ? infraConflict(live.object, vm) : undefined;
  if (foreign) return conflictPlan(o, now, foreign);
  if (live?.state !== 'Terminating' && live?.state !== 'Unknown') return undefined;
  // Until its machine is gone, what PlacementValid said stands (a recreate announced stays announced).
  const said = vm.status?.conditions?.some((c) => c.type === ConditionType.PlacementValid) ? current(vm, ConditionType.PlacementValid) : placementValid;
  return { ...mirrorOnly(o, now, said, running), requeueAfterMs: WAIT_MS };
}

/** What buildInfraMachine builds the VM's machine from: the placement, and the user-data Secret when there is user-data. */
function toInfraBuildInput(vm: VirtualMachine, input: PlaceInput, withUserData: boolean): InfraBuildInput {
  return {
    vm,
    vmClass: input.vmClass,
    image: input.image,
    placement: input.placement,
    ...(withUserData ? { userDataSecretName: userDataSecretName(vm) } : {}),
    ...(input.imageRef !== undefined ? { imageRef: input.imageRef } : {}),
    ...(input.placementSpec !== undefined ? { placementSpec: input.placementSpec } : {}),
  };
}

/** A placement nothing stands in the way of: what `place` found to write. */
interface Placed {
  readonly targetKind: string;
  readonly placementValid: ConditionInput;
  /** The VM's live machine of targetKind, when there is one. */
  readonly infra: InfraMachine | undefined;
  /** The machine as it should be. */
  readonly built: InfraMachine;
  /** The user-data Secret to write; undefined when there is none or the live one is right. */
  readonly userDataSecret: UserDataSecretObject | undefined;
}

/** Write the machine (and its user-data Secret) and say where the VM is scheduled. */
function placedPlan(o: VmObserved, now: Date, input: PlaceInput, placed: Placed): ActivePlan {
  const { vm } = o;
  const { placement, running } = input;
  const { infra, built, userDataSecret } = placed;
  const scheduled = scheduledCondition(vm, describePlacement(placement), placement.explanation);
  const status = statusFor(vm, now, { scheduled, placementValid: placed.placementValid, infra, infraKind: placed.targetKind });
  const recorded = vm.status?.scheduled;
  return {
    ...noAction,
    // The uid makes the write an update of exactly the object judged ours.
    applyInfra: infra?.metadata.uid ? { ...built, metadata: { ...built.metadata, uid: infra.metadata.uid } } : built,
    ...(userDataSecret ? { userDataSecret } : {}),
    // Running here already (the machine agrees with the fresh placement): only a record that disagrees is news.
    events: restoredEvents(recorded, running),
    status: {
      ...status,
      scheduled: recorded && samePlacement(recorded, placement) ? recorded : toScheduledPlacement(placement, running ? since(running.machine, now) : now),
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: placed.targetKind, name: vm.metadata.name ?? '' },
      heldAddresses: heldAddresses(vm, input.vmClass),
      ...(vm.metadata.generation !== undefined ? { observedGeneration: vm.metadata.generation } : {}),
    },
  };
}

/**
 * Scheduled=True at `where`: with why it won when the scheduler just chose it; a later pass (the
 * VM kept there) keeps the explanation the condition already gives for the same place.
 */
function scheduledCondition(vm: VirtualMachine, where: string, explanation?: string): ConditionInput {
  const said = vm.status?.conditions?.find((c) => c.type === ConditionType.Scheduled && c.status === 'True')?.message;
  const kept = said !== undefined && said.startsWith(`${where}: `) ? said : where;
  return { type: ConditionType.Scheduled, status: 'True', reason: Reason.Scheduled, message: explanation ? `${where}: ${explanation}` : kept };
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
  const scheduled = record.scheduled ? scheduledCondition(o.vm, describePlacement(record.scheduled)) : notScheduled(Reason.Scheduling, 'not scheduled yet');
  const status = statusFor(o.vm, now, { scheduled, placementValid, infra, infraKind: infra?.kind ?? o.vm.status?.infrastructureRef?.kind ?? '' });
  return { ...noAction, events: record.events, status: { ...status, ...(record.scheduled ? { scheduled: record.scheduled } : {}) } };
}

/** Nothing can be placed: report why, keep what exists (its record following the machine). */
function blocked(o: VmObserved, now: Date, gate: Gate): ActivePlan {
  const running = runningOn(o);
  const record = recordOf(o.vm, running, now);
  const status = statusFor(o.vm, now, {
    scheduled: gate.scheduled,
    infra: running?.machine,
    infraKind: running?.machine.kind ?? '',
    ...(gate.ready ? { ready: gate.ready } : {}),
  });
  return {
    ...noAction,
    events: record.events,
    status: { ...status, ...(record.scheduled ? { scheduled: record.scheduled } : {}) },
    ...(gate.requeueAfterMs ? { requeueAfterMs: gate.requeueAfterMs } : {}),
  };
}
