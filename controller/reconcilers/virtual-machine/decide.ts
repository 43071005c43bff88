// The VirtualMachine decision: a pure function from what the reconciler
// observed to what it should do (STYLE §2 "How a reconciler reads"). Pause
// and deletion are branches here; the reconciler only carries the plan out.
// Ownership too (issue 10): an object of the VM's name in its namespace that
// is not the VM's (an infrastructure machine it does not control, a Secret
// `<vm>-user-data` that is not its rendered user-data) is reported and left
// alone, never written, deleted or referred to.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ResolvedClass, VirtualMachine, VirtualMachineStatus } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP, type OwnerReference } from '../../../infra/api/kind.js';
import { Finalizer, Label, SecretType } from '../../../infra/api/well-known.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import { schedule } from '../../scheduler/schedule.js';
import { copiedReason, setConditions, type ConditionInput } from '../../runtime/conditions.js';
import { isPaused, pausedCondition } from '../paused.js';
import { evaluateDrift } from './drift.js';
import { computeEffectiveHardware } from './effective-hardware.js';
import { buildInfraMachine, type InfraMachineObject } from './infra-builders.js';
import { toScheduledPlacement, type Placement } from './placement.js';
import { findDuplicateAddress, heldAddresses, type SiblingAddresses } from './static-addresses.js';
import { mirrorInfraStatus, readyCondition } from './status-mirror.js';
import { renderUserData, userDataVars } from './user-data.js';

/**
 * What one infrastructure kind holds under this VM's name. Unknown: it could
 * not be read. Foreign: an object this VM does not control; decide marks
 * Present and Terminating objects so, whatever the reconciler passed.
 */
export type InfraState =
  | { readonly kind: string; readonly state: 'Absent' | 'Unknown' }
  | { readonly kind: string; readonly state: 'Present' | 'Terminating' | 'Foreign'; readonly object: InfraMachineObject };

export type UserDataSource = { readonly ok: true; readonly content: string } | { readonly ok: false; readonly message: string };

/** The Secret `<vm>-user-data`, read by name (the controller may not list or watch Secrets). */
export type RenderedSecretState = { readonly state: 'Absent' } | { readonly state: 'Present'; readonly secret: LiveSecret };

/** What the reconciler keeps of a live Secret: identity, ownership, type, and `data.value` (base64) to compare; no other data. */
export interface LiveSecret {
  readonly metadata: { readonly name?: string; readonly uid?: string; readonly ownerReferences?: readonly OwnerReference[] };
  readonly type?: string;
  readonly value?: string;
}

/** The rendered user-data Secret as the controller writes it; `metadata.uid` set: an update of that Secret, which is ours. */
export interface UserDataSecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  metadata: { name: string; namespace: string; uid?: string; labels: Record<string, string>; ownerReferences: OwnerReference[] };
  type: string;
  data: { value: string };
}

type Owned = { readonly metadata: { readonly ownerReferences?: readonly OwnerReference[] } };

/** A write the apply step could not make because the object is not, or is no longer wholly, the VM's. */
export interface WriteConflict {
  readonly reason: typeof Reason.UserDataSecretConflict | typeof Reason.InfraMachineConflict;
  readonly message: string;
}

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

export interface VmPlan {
  readonly ensureFinalizer: boolean;
  readonly removeFinalizer: boolean;
  /** Objects the VM controls, to delete (each only while its uid is the one given). */
  readonly deleteInfra: readonly InfraMachineObject[];
  /** The infra machine to create, or (metadata.uid set) to update: it is the VM's. */
  readonly applyInfra?: InfraMachineObject;
  /** The rendered user-data Secret to create, or (metadata.uid set) to update; absent when the live one is already right. */
  readonly userDataSecret?: UserDataSecretObject;
  /** The status fields the controller owns; undefined: leave status alone. */
  readonly status?: VirtualMachineStatus;
  readonly requeueAfterMs?: number;
}

const RECHECK_MS = 60_000;
const WAIT_MS = 5_000;

export const userDataSecretName = (vm: VirtualMachine): string => `${vm.metadata.name ?? ''}-user-data`;

export function decideVirtualMachine(observed: VmObserved, now: Date): VmPlan {
  const o = withForeignMarked(observed);
  const { vm } = o;
  if (isPaused(vm)) return pausedPlan(o, now);
  if (vm.metadata.deletionTimestamp) return deletionPlan(o);
  const ensureFinalizer = !(vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
  return { ...activePlan(o, now), ensureFinalizer };
}

function pausedPlan(o: VmObserved, now: Date): VmPlan {
  const conditions = setConditions(
    o.vm.status?.conditions,
    [pausedCondition(o.vm, o.vm.metadata.generation), { type: ConditionType.Ready, status: 'False', reason: Reason.Paused, message: 'Reconciliation is paused' }],
    now,
  );
  return { ...noAction, status: { ...ownedStatus(o.vm), conditions } };
}

/** Whether `vm` is the controller of `object`: an ownerReference with controller true and the VM's uid. */
export function isControlledBy(object: Owned, vm: VirtualMachine): boolean {
  const uid = vm.metadata.uid;
  return !!uid && (object.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);
}

/**
 * The conflict a Secret `<vm>-user-data` is unless it is the VM's rendered
 * user-data: banlieue's type (immutable, so set only at creation) and the VM
 * as controller. Undefined: it is the VM's.
 */
export function renderedSecretConflict(secret: LiveSecret, vm: VirtualMachine): WriteConflict | undefined {
  const type = secret.type ?? 'Opaque';
  const why = type !== SecretType.userData ? `its type is ${type}, not ${SecretType.userData}` : isControlledBy(secret, vm) ? undefined : controllerOf(secret, vm);
  if (!why) return undefined;
  return { reason: Reason.UserDataSecretConflict, message: `Secret ${userDataSecretName(vm)} exists and is not this VirtualMachine's rendered user-data (${why}); it is left untouched` };
}

/** The conflict an infrastructure machine of the VM's name is unless the VM controls it. Undefined: it is the VM's. */
export function infraConflict(object: InfraMachineObject, vm: VirtualMachine): WriteConflict | undefined {
  if (isControlledBy(object, vm)) return undefined;
  return { reason: Reason.InfraMachineConflict, message: `${object.kind} ${object.metadata.name ?? ''} exists and is not controlled by this VirtualMachine (${controllerOf(object, vm)}); it is left untouched` };
}

/** A write refused because another writer changed a field the controller sets in the VM's object (`apiMessage` names fields and managers, no values). */
export function fieldConflict(reason: WriteConflict['reason'], object: { readonly kind: string; readonly metadata: { readonly name?: string } }, apiMessage: string): WriteConflict {
  return { reason, message: `${object.kind} ${object.metadata.name ?? ''} is not updated: another writer changed a field the controller sets (${apiMessage})` };
}

/**
 * The status once applying met `conflict` (an object found in the way
 * between reading and writing, or a field another writer changed): the same
 * report as for a conflict seen before applying.
 */
export function decideWriteConflict(observed: VmObserved, conflict: WriteConflict, now: Date): Pick<VmPlan, 'status' | 'requeueAfterMs'> {
  return conflictPlan(withForeignMarked(observed), now, conflict);
}

/** Who controls an object the VM does not, in words. */
function controllerOf(object: Owned, vm: VirtualMachine): string {
  const controller = object.metadata.ownerReferences?.find((r) => r.controller === true);
  if (!controller) return 'it has no controller';
  const sameName = controller.kind === 'VirtualMachine' && controller.name === vm.metadata.name;
  return `it is controlled by ${controller.kind} ${controller.name}${sameName ? ` of uid ${controller.uid}, not this one` : ''}`;
}

/** Present or Terminating objects the VM does not control become Foreign: never mirrored, replaced or deleted. */
function withForeignMarked(o: VmObserved): VmObserved {
  const infra = o.infra.map((i): InfraState => ('object' in i && i.state !== 'Foreign' && !isControlledBy(i.object, o.vm) ? { kind: i.kind, state: 'Foreign', object: i.object } : i));
  return { ...o, infra };
}

/** Delete every infra kind the VM controls, independently; release the VM only when all are gone (another's object is not waited for). */
function deletionPlan(o: VmObserved): VmPlan {
  const present = o.infra.flatMap((i) => (i.state === 'Present' ? [i.object] : []));
  const allGone = o.infra.every((i) => i.state === 'Absent' || i.state === 'Foreign');
  const holds = (o.vm.metadata.finalizers ?? []).includes(Finalizer.virtualMachine);
  return { ...noAction, deleteInfra: present, removeFinalizer: allGone && holds, ...(allGone ? {} : { requeueAfterMs: WAIT_MS }) };
}

const noAction: VmPlan = { ensureFinalizer: false, removeFinalizer: false, deleteInfra: [] };

interface Gate {
  readonly scheduled: ConditionInput;
  readonly ready?: ConditionInput;
  readonly requeueAfterMs?: number;
}

function activePlan(o: VmObserved, now: Date): Omit<VmPlan, 'ensureFinalizer'> {
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
  const fresh = result.ok ? result.placement : undefined;
  const drift = evaluateDrift(vm, fresh);
  if (!vm.status?.scheduled && !result.ok) {
    return blocked(o, now, { scheduled: notScheduled(result.reason, result.message), requeueAfterMs: RECHECK_MS });
  }
  if (drift.action === 'StickToOld' || drift.action === 'SurfaceOnly') {
    const placementValid: ConditionInput =
      drift.action === 'SurfaceOnly' && drift.reason
        ? { type: ConditionType.PlacementValid, status: 'False', reason: drift.reason, message: `${driftMessage(drift.reason)}; annotate banlieue.io/migrate=true to move it` }
        : placementMatches;
    return mirrorOnly(o, now, placementValid);
  }
  if (!fresh) return mirrorOnly(o, now, placementMatches);
  const stale = staleInfra(o, fresh, drift.action === 'Recreate');
  if (stale.length > 0) {
    const placementValid: ConditionInput = { type: ConditionType.PlacementValid, status: 'False', reason: drift.reason ?? Reason.ProviderChanged, message: `${driftMessage(drift.reason)}; recreating` };
    return { ...mirrorOnly(o, now, placementValid), deleteInfra: stale, requeueAfterMs: WAIT_MS };
  }
  return place(o, now, fresh, vmClass, image);
}

/** Infra objects to delete before (re)creating at `fresh`: other kinds, and the current one when recreating. */
function staleInfra(o: VmObserved, fresh: Placement, recreate: boolean): InfraMachineObject[] {
  const target = o.backends.machineKind(fresh.providerClass);
  return o.infra.flatMap((i) => (i.state === 'Present' && (i.kind !== target || recreate) ? [i.object] : []));
}

function place(o: VmObserved, now: Date, placement: Placement, vmClass: VMClass, image: VMImage): Omit<VmPlan, 'ensureFinalizer'> {
  const { vm } = o;
  if (o.userData && !o.userData.ok) return blocked(o, now, { scheduled: notScheduled(Reason.UserDataNotFound, o.userData.message), requeueAfterMs: RECHECK_MS });
  const backend = o.backends.get(placement.providerClass);
  if (!backend) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, `providerClass "${placement.providerClass}" has no infrastructure machine kind`) });
  const targetKind = backend.api.machine.kind;
  const live = o.infra.find((i) => i.kind === targetKind);
  const foreign = live?.state === 'Foreign' ? infraConflict(live.object, vm) : undefined;
  if (foreign) return conflictPlan(o, now, foreign);
  if (live?.state === 'Terminating' || live?.state === 'Unknown') {
    return { ...mirrorOnly(o, now, placementMatches), requeueAfterMs: WAIT_MS };
  }
  const rendered = o.userData?.ok ? userDataSecretWrite(o, renderUserData(o.userData.content, userDataVars(vm, vmClass, backend.api.providerIDScheme))) : undefined;
  if (rendered && !rendered.ok) return conflictPlan(o, now, rendered.conflict);
  const built = buildInfraMachine({ vm, vmClass, image, placement, ...(rendered ? { userDataSecretName: userDataSecretName(vm) } : {}) }, o.backends);
  if (!built.ok) return blocked(o, now, { scheduled: notScheduled(Reason.InfraBuildFailed, built.message) });
  const infra = live?.state === 'Present' ? live.object : undefined;
  const userDataSecret = rendered?.write;
  const scheduled: ConditionInput = { type: ConditionType.Scheduled, status: 'True', reason: Reason.Scheduled, message: `${placement.providerName}/${placement.failureDomain.name}` };
  const status = statusFor(o, now, { scheduled, placementValid: placementMatches, infra, infraKind: targetKind });
  return {
    ...noAction,
    // The uid makes the write an update of exactly the object judged ours.
    applyInfra: infra?.metadata.uid ? { ...built.object, metadata: { ...built.object.metadata, uid: infra.metadata.uid } } : built.object,
    ...(userDataSecret ? { userDataSecret } : {}),
    status: {
      ...status,
      scheduled: samePlacement(vm, placement) && vm.status?.scheduled ? vm.status.scheduled : toScheduledPlacement(placement, now),
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: targetKind, name: vm.metadata.name ?? '' },
      heldAddresses: heldAddresses(vm, vmClass),
      ...(vm.metadata.generation !== undefined ? { observedGeneration: vm.metadata.generation } : {}),
    },
  };
}

/** The Secret to write for `content`, none when the VM's own already holds it, or the conflict when the Secret of that name is not the VM's. */
function userDataSecretWrite(o: VmObserved, content: string): { readonly ok: true; readonly write?: UserDataSecretObject } | { readonly ok: false; readonly conflict: WriteConflict } {
  const desired = toUserDataSecret(o.vm, content);
  const live = o.renderedSecret ?? { state: 'Absent' };
  if (live.state === 'Absent') return { ok: true, write: desired };
  const conflict = renderedSecretConflict(live.secret, o.vm);
  if (conflict) return { ok: false, conflict };
  if (live.secret.value === desired.data.value) return { ok: true };
  return { ok: true, write: { ...desired, metadata: { ...desired.metadata, uid: live.secret.metadata.uid ?? '' } } };
}

/** The rendered user-data Secret of `vm`: banlieue's type, the VM as controller, so garbage collection removes it with the VM. */
export function toUserDataSecret(vm: VirtualMachine, content: string): UserDataSecretObject {
  const name = vm.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: userDataSecretName(vm),
      namespace: vm.metadata.namespace ?? '',
      labels: { [Label.ownedBy]: name },
      ownerReferences: [{ apiVersion: `${CORE_GROUP}/${API_VERSION}`, kind: 'VirtualMachine', name, uid: vm.metadata.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    type: SecretType.userData,
    data: { value: Buffer.from(content, 'utf8').toString('base64') },
  };
}

/** An object in the VM's way is not the VM's: report it, write nothing, keep what the VM has; recheck (Secrets are not watched). */
function conflictPlan(o: VmObserved, now: Date, conflict: WriteConflict): Omit<VmPlan, 'ensureFinalizer'> {
  return blocked(o, now, { scheduled: notScheduled(conflict.reason, conflict.message), requeueAfterMs: RECHECK_MS });
}

/** Keep the current infra object and only mirror its status. */
function mirrorOnly(o: VmObserved, now: Date, placementValid: ConditionInput): Omit<VmPlan, 'ensureFinalizer'> {
  const live = o.infra.find((i) => i.state === 'Present' || i.state === 'Terminating');
  const infra = live && 'object' in live ? live.object : undefined;
  const scheduled = o.vm.status?.scheduled
    ? { type: ConditionType.Scheduled, status: 'True' as const, reason: Reason.Scheduled, message: `${o.vm.status.scheduled.providerName}/${o.vm.status.scheduled.failureDomain}` }
    : notScheduled(Reason.Scheduling, 'not scheduled yet');
  return { ...noAction, status: statusFor(o, now, { scheduled, placementValid, infra, infraKind: infra?.kind ?? o.vm.status?.infrastructureRef?.kind ?? '' }) };
}

/** Nothing can be placed: report why, keep what exists. */
function blocked(o: VmObserved, now: Date, gate: Gate): Omit<VmPlan, 'ensureFinalizer'> {
  const live = o.infra.find((i) => i.state === 'Present');
  const infra = live && 'object' in live ? live.object : undefined;
  const status = statusFor(o, now, { scheduled: gate.scheduled, infra, infraKind: infra?.kind ?? '', ...(gate.ready ? { ready: gate.ready } : {}) });
  return { ...noAction, status, ...(gate.requeueAfterMs ? { requeueAfterMs: gate.requeueAfterMs } : {}) };
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

function samePlacement(vm: VirtualMachine, p: Placement): boolean {
  const s = vm.status?.scheduled;
  return !!s && s.providerName === p.providerName && s.failureDomain === p.failureDomain.name && sameResolved(s.resolvedStorage ?? [], p.resolvedStorage) && sameResolved(s.resolvedNetworks ?? [], p.resolvedNetworks);
}

/** Field by field: the API server returns an object's keys in its own order, so JSON text would differ. */
function sameResolved(live: readonly ResolvedClass[], wanted: readonly ResolvedClass[]): boolean {
  return live.length === wanted.length && live.every((r, i) => r.className === wanted[i]?.className && r.backendId === wanted[i]?.backendId);
}

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

function driftMessage(reason: string | undefined): string {
  switch (reason) {
    case Reason.ProviderChanged:
      return 'the Provider no longer fits';
    case Reason.FailureDomainChanged:
      return 'the failure domain no longer fits';
    case Reason.StorageMappingChanged:
      return 'a storage class now resolves differently';
    case Reason.NetworkMappingChanged:
      return 'a network class now resolves differently';
    default:
      return 'the placement changed';
  }
}
