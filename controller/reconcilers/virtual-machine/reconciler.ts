// VirtualMachine: load from caches → decide (pure) → apply → status.
// Writes only what differs from the live objects: a steady state makes no
// API writes at all. Objects written into the VM's namespace (its infra
// machine, its rendered user-data Secret) are created only where nothing of
// their name exists and updated only while they are the VM's, never by a
// forced apply: anything else becomes a condition. A plan's
// Events are recorded before its writes, so the one announcing a recreate
// (placement drift) exists before the machine is deleted.
//
// Where a VM runs is read from the infrastructure machine it controls, for
// the VM and for its siblings alike (placement.ts): `status.scheduled` is
// writable by anyone allowed the status subresource, so a forged one, on the
// VM or on a sibling its anti-affinity looks at, moves nothing.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { DeletionPolicy } from '../../../infra/api/machine-fields.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { API_VERSION, INFRA_GROUP } from '../../../infra/api/kind.js';
import { FieldManager, Finalizer } from '../../../infra/api/well-known.js';
import type { BackendCatalog } from '../../backends/descriptor.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import { blocked, done, type ReconcileResult } from '../../runtime/errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ensureFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import { keyOf, type Informer } from '../../runtime/informer.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import type { Metrics } from '../../runtime/metrics.js';
import { readBinaryData } from '../../runtime/object-data.js';
import type { OwnedRef, ServerSideApply } from '../../runtime/server-side-apply.js';
import { Expectations, someFieldsOf } from '../../runtime/expectations.js';
import { applyStatus, containsAll } from '../../runtime/status-writer.js';
import { withMachineMade } from './vm-status.js';
import { decideVirtualMachine, decideWriteConflict, needsFinalizer, RECHECK_MS, type UserDataSource, type VmObserved, type VmPlan } from './decide.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import {
  createRefused,
  fieldConflict,
  infraConflict,
  isControlledBy,
  renderedSecretConflict,
  userDataSecretName,
  type InfraState,
  type LiveSecret,
  type RenderedSecretState,
  type UserDataSecretObject,
  type WriteConflict,
} from './ownership.js';
import { runningPlacement } from './placement.js';
import { decideSpecNotApplied, specRefused, type SpecRefused } from './spec-not-applied.js';
import { claimedFirst } from '../held-claims.js';
import { DEFAULT_RECREATES_PER_MINUTE, RecreateBudgets } from './recreate-budget.js';
import { heldAddresses, type SiblingAddresses } from './static-addresses.js';
import { indexSiblings, siblingsRead } from './siblings.js';

export interface VirtualMachineReconcilerDeps {
  readonly api: KubeApi;
  readonly ssa: ServerSideApply;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly vms: Informer<VirtualMachine>;
  readonly providers: Informer<Provider>;
  readonly classes: Informer<VMClass>;
  readonly images: Informer<VMImage>;
  /** The backends whose machine kinds this controller writes. */
  readonly backends: BackendCatalog;
  /** One informer per infrastructure machine kind, by kind. */
  readonly machines: ReadonlyMap<string, Informer<InfraMachine>>;
  /** VirtualMachines of one namespace the controller may start recreating per minute (migrationPolicy automatic or annotated). @default 5 */
  readonly recreatesPerMinute?: number;
}

/** What a decision claimed (placement, addresses) before the informer shows it. */
type Placed = Pick<NonNullable<VirtualMachine['status']>, 'scheduled' | 'heldAddresses'>;

/** A Secret as the API server returns it. */
interface SecretRead {
  metadata: LiveSecret['metadata'];
  type?: string;
  data?: Record<string, string>;
}

/** A write the VM's plan asks for, and how to judge an object found in its place. */
interface OwnedWrite<T extends ObjectWithUid> {
  readonly desired: T;
  /** The reason an update refused for a field another writer set is reported with. */
  readonly reason: WriteConflict['reason'];
  /** The conflict `existing` is; undefined when it is the VM's. */
  readonly conflictOf: (existing: T) => WriteConflict | undefined;
  /** Whether `existing` (the VM's) already says what `desired` does. */
  readonly upToDate: (existing: T) => boolean;
}

type ObjectWithUid = { apiVersion: string; kind: string; metadata: { name?: string; namespace?: string; uid?: string } };

export class VirtualMachineReconciler implements Reconciler {
  readonly name = 'virtualmachine';
  readonly kind = 'VirtualMachine';
  /** Placements decided and not yet shown by the cache (expectPlacement). */
  private readonly placed = new Expectations(someFieldsOf<'status', Placed>('status'));
  private readonly recreates: RecreateBudgets;

  constructor(private readonly d: VirtualMachineReconcilerDeps) {
    this.recreates = new RecreateBudgets(d.recreatesPerMinute ?? DEFAULT_RECREATES_PER_MINUTE);
    indexSiblings(d.vms);
  }

  /**
   * One pass, in a fixed order: the finalizer, in a write of its own, and return → load (caches,
   * then the user-data reads) → decide (pure) → the plan's Events → its writes (deletion
   * policies, deletions, the user-data Secret, the machine) → one status write, from the plan (with
   * the machine it made, when it made one) or from what refused a write → the finalizer's removal.
   */
  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const vm = this.d.vms.get(key);
    if (!vm) {
      this.placed.forget(key);
      return done;
    }
    if (await this.addedFinalizer(vm)) return done;
    const { userData, renderedSecret } = await this.readUserDataSources(vm);
    const unsynced = await this.readUnsyncedInfra(vm);
    // From here to the expectation: no await, so no other reconcile decides a placement in between.
    const latest = this.d.vms.get(key) ?? vm;
    const now = this.d.clock.now();
    const namespace = latest.metadata.namespace ?? '';
    const observed = {
      ...this.observeAssumed(key, latest, { userData, renderedSecret }, unsynced),
      recreateBudget: this.recreates.budget(namespace, now),
    };
    const plan = decideVirtualMachine(observed, now);
    const ref = finalizerRef(latest);
    // Still missing (it changed since the first read): as above.
    if (plan.ensureFinalizer && (await ensureFinalizer(this.d.api, ref, Finalizer.virtualMachine))) return done;
    this.expectPlacement(key, plan, latest);
    if (plan.takesRecreate) this.recreates.take(namespace, now);
    for (const event of plan.events) {
      log.info({ reason: event.reason }, event.type === 'Warning' ? 'Recording a warning' : 'Recording an event');
      await this.d.events.record(latest as never, event.type, event.reason, event.message);
    }
    let outcome: Pick<VmPlan, 'status' | 'requeueAfterMs'> = plan;
    let refused = false;
    try {
      const { refusal, made } = await this.write(latest, plan, log);
      if (refusal) {
        refused = true;
        outcome = this.afterRefusal(key, { latest, observed, plan, refusal, now }, log);
      } else if (made && plan.status) {
        // Decided while the machine did not exist: the status says what this pass made.
        outcome = { ...plan, status: withMachineMade(plan.status, made, now) };
      }
    } finally {
      // Written even when a write failed: the status says what was decided, and why not done.
      if (outcome.status) await this.writeStatus(latest, outcome.status, log);
    }
    if (plan.removeFinalizer) {
      log.info('All infrastructure gone; releasing the VirtualMachine');
      await removeFinalizer(this.d.api, ref, Finalizer.virtualMachine);
    }
    // A refused write is tried again on the key's backoff, not on the event of the status that says so
    // (which would run the next pass at once: a refused create many times a second).
    if (refused) return blocked(outcome.requeueAfterMs ?? RECHECK_MS);
    return outcome.requeueAfterMs !== undefined ? { requeueAfterMs: outcome.requeueAfterMs } : done;
  }

  /**
   * The finalizer first, alone, before anything is read or decided (a decision would be thrown
   * away): true when this pass added it, and the pass that follows its watch event decides.
   */
  private async addedFinalizer(vm: VirtualMachine): Promise<boolean> {
    return needsFinalizer(vm) && !!(await ensureFinalizer(this.d.api, finalizerRef(vm), Finalizer.virtualMachine));
  }

  /** The status once a write was refused: a spec admission keeps from the machine (it stays as it was), or an object in the way. */
  private afterRefusal(
    key: string,
    pass: {
      readonly latest: VirtualMachine;
      readonly observed: VmObserved;
      readonly plan: VmPlan;
      readonly refusal: WriteConflict | SpecRefused;
      readonly now: Date;
    },
    log: Logger,
  ): Pick<VmPlan, 'status' | 'requeueAfterMs'> {
    const { refusal } = pass;
    if (refusal.reason === Reason.SpecNotApplied) {
      log.info({ reason: refusal.reason }, 'Spec change refused by admission; reporting it');
      return decideSpecNotApplied(pass.latest, pass.plan, refusal, pass.now);
    }
    log.info({ reason: refusal.reason }, 'Leaving an object the VirtualMachine does not own untouched');
    this.placed.forget(key); // Nothing was placed.
    return decideWriteConflict(pass.observed, refusal, pass.now);
  }

  /**
   * What `plan` places (status.scheduled, static addresses) stands for this VM and its siblings until
   * the cache shows it — the scheduler's "assume" step: two VMs decided at once must not both take
   * a failure domain a required anti-affinity term keeps them apart from.
   */
  private expectPlacement(key: string, plan: VmPlan, cached: VirtualMachine): void {
    const { scheduled, heldAddresses: held } = plan.status ?? {};
    if (!scheduled && !held) this.placed.forget(key);
    else this.placed.expect(key, cached, { ...(scheduled ? { scheduled } : {}), ...(held ? { heldAddresses: held } : {}) });
  }

  /**
   * The VM as this process last decided it (its cache copy overlaid with the placement it expects)
   * and what it refers to. The overlay, this process's own decision, is kept while it fits: the
   * status in the cache is anyone's to write.
   */
  private observeAssumed(
    key: string,
    latest: VirtualMachine,
    sources: { userData: UserDataSource | undefined; renderedSecret: RenderedSecretState | undefined },
    unsynced: ReadonlyMap<string, InfraState>,
  ): VmObserved {
    const assumed = this.placed.observe(key, latest);
    const decided = assumed !== latest ? assumed.status?.scheduled : undefined;
    return { ...this.observe(assumed, sources, unsynced), ...(decided ? { decided } : {}) };
  }

  private observe(
    vm: VirtualMachine,
    { userData, renderedSecret }: { userData: UserDataSource | undefined; renderedSecret: RenderedSecretState | undefined },
    unsynced: ReadonlyMap<string, InfraState>,
  ): VmObserved {
    const ns = vm.metadata.namespace ?? '';
    const vmClass = this.d.classes.get(vm.spec.classRef.name);
    const addresses = vmClass ? heldAddresses(vm, vmClass).map((h) => h.address) : [];
    let siblings: VirtualMachine[] | undefined;
    const readSiblings = (): VirtualMachine[] =>
      (siblings ??= siblingsRead(this.d.vms, { vm, addresses, assumed: this.placed.keys() }).map((o) => this.asPlaced(o)));
    return {
      backends: this.d.backends,
      vm,
      ...(vmClass ? { vmClass } : {}),
      ...(this.d.images.get(vm.spec.imageRef.name) ? { image: this.d.images.get(vm.spec.imageRef.name) as VMImage } : {}),
      providers: this.d.providers.list(ns),
      siblings: readSiblings,
      classOf: (name) => this.d.classes.get(name),
      // Only a VM claiming an address can find it held.
      siblingAddresses: addresses.length > 0 ? this.siblingAddresses(vm, readSiblings()) : [],
      infra: this.infraStates(key(vm), unsynced),
      ...(userData ? { userData } : {}),
      ...(renderedSecret ? { renderedSecret } : {}),
    };
  }

  /**
   * A sibling as the scheduler sees it: where the infrastructure machine it
   * controls runs, not where its status.scheduled says; without a running
   * machine, where this process placed it or its status records (a placement
   * whose machine the cache does not show yet still keeps VMs apart).
   */
  private asPlaced(sibling: VirtualMachine): VirtualMachine {
    const siblingKey = keyOf(sibling);
    const seen = this.placed.observe(siblingKey, sibling);
    const machine = this.runningMachine(siblingKey, sibling);
    if (!machine) return seen;
    const { providerName, providerClass, failureDomain } = runningPlacement(machine, this.d.backends);
    const recorded = seen.status?.scheduled;
    // A record that agrees with the machine, as most do, is read as it is (no copy per sibling and pass).
    if (recorded?.providerName === providerName && recorded.providerClass === providerClass && recorded.failureDomain === failureDomain) return seen;
    return { ...seen, status: { ...seen.status, scheduled: { providerName, providerClass, failureDomain } } };
  }

  /** A Present infrastructure machine `vm` (cached under `vmKey`) controls, from the caches. */
  private runningMachine(vmKey: string, vm: VirtualMachine): InfraMachine | undefined {
    for (const informer of this.d.machines.values()) {
      const machine = informer.get(vmKey);
      if (machine && !machine.metadata.deletionTimestamp && isControlledBy(machine, vm)) return machine;
    }
    return undefined;
  }

  /** Addresses the other VMs hold, or claimed before this one (older first, then by name). */
  private siblingAddresses(vm: VirtualMachine, siblings: readonly VirtualMachine[]): SiblingAddresses[] {
    return siblings.flatMap((sibling) => {
      if (sibling.status?.heldAddresses?.length) return [{ vm: sibling, heldAddresses: sibling.status.heldAddresses }];
      const siblingClass = this.d.classes.get(sibling.spec.classRef.name);
      return siblingClass && claimedFirst(sibling, vm) ? [{ vm: sibling, heldAddresses: heldAddresses(sibling, siblingClass) }] : [];
    });
  }

  private infraStates(vmKey: string, unsynced: ReadonlyMap<string, InfraState>): InfraState[] {
    return [...this.d.machines].map(([kind, informer]): InfraState => {
      if (!informer.hasSynced()) return unsynced.get(kind) ?? { kind, state: 'Unknown' };
      return stateOf(kind, informer.get(vmKey));
    });
  }

  /**
   * The VM's object of each machine kind whose informer has not synced (RBAC,
   * CRD missing), read by name: only a VM whose own read fails waits on that
   * kind (upstream ADR-0090), not every VM. A kind the server does not serve is Absent.
   */
  private async readUnsyncedInfra(vm: VirtualMachine): Promise<Map<string, InfraState>> {
    const states = new Map<string, InfraState>();
    for (const [kind, informer] of this.d.machines) {
      if (informer.hasSynced()) continue;
      const ref = { apiVersion: `${INFRA_GROUP}/${API_VERSION}`, kind, metadata: { name: vm.metadata.name ?? '', namespace: vm.metadata.namespace ?? '' } };
      try {
        states.set(kind, stateOf(kind, await this.d.api.get<InfraMachine>(ref)));
      } catch (err) {
        states.set(kind, err instanceof ApiStatusError && err.code === 404 ? { kind, state: 'Absent' } : { kind, state: 'Unknown' });
      }
    }
    return states;
  }

  /** The user-data source and the Secret it is rendered into, read when the VM has user-data and is not being deleted. */
  private async readUserDataSources(vm: VirtualMachine): Promise<{ userData: UserDataSource | undefined; renderedSecret: RenderedSecretState | undefined }> {
    if (!vm.spec.userData || vm.metadata.deletionTimestamp) return { userData: undefined, renderedSecret: undefined };
    return { userData: await this.readUserData(vm), renderedSecret: await this.readRenderedSecret(vm) };
  }

  /** The user-data source, read by name (never listed or watched). */
  private async readUserData(vm: VirtualMachine): Promise<UserDataSource> {
    const ref = vm.spec.userData?.secretRef ?? vm.spec.userData?.configMapRef;
    const kind = vm.spec.userData?.secretRef ? 'Secret' : 'ConfigMap';
    if (!ref) return { ok: false, message: 'spec.userData names no source' };
    const dataKey = ref.key ?? 'user-data';
    const data = await readBinaryData(this.d.api, kind, vm.metadata.namespace ?? '', ref.name);
    if (!data) return { ok: false, message: `${kind} ${ref.name} not found` };
    const content = data[dataKey];
    if (content === undefined) return { ok: false, message: `${kind} ${ref.name} has no key "${dataKey}"` };
    return { ok: true, content };
  }

  /**
   * Deletion policies, deletions, then the user-data Secret, then the infra machine that refers to it; stops at the first refusal.
   * `made`: the machine the cache did not show, as this pass created it or found it made (the VM's).
   */
  private async write(
    vm: VirtualMachine,
    plan: VmPlan,
    log: Logger,
  ): Promise<{ readonly refusal?: WriteConflict | SpecRefused; readonly made?: InfraMachine }> {
    for (const { machine, deletionPolicy } of plan.setDeletionPolicy ?? []) await this.setDeletionPolicy(machine, deletionPolicy, log);
    for (const infra of plan.deleteInfra) await this.deleteInfra(infra, log);
    const secret = plan.userDataSecret;
    if (secret) {
      const written = await this.writeOwned({
        desired: secret,
        reason: Reason.UserDataSecretConflict,
        conflictOf: (existing) => renderedSecretConflict(toLiveSecret(existing), vm),
        upToDate: (existing) => containsAll(existing, secret),
      });
      if ('refusal' in written) return written;
    }
    const infra = plan.applyInfra;
    if (!infra || this.upToDate(infra)) return {};
    log.info({ infra: infra.kind }, infra.metadata.uid ? 'Updating infrastructure machine' : 'Creating infrastructure machine');
    return this.writeOwned({
      desired: infra,
      reason: Reason.InfraMachineConflict,
      conflictOf: (existing) => infraConflict(existing, vm),
      upToDate: (existing) => this.contains(existing, infra),
    });
  }

  /**
   * Create `w.desired`, or update the object its uid names (the VM's, as
   * decided). An object found in its place on create (made since it was
   * read: by a previous pass not yet in the cache, or by someone else) is
   * updated only when it is the VM's. An update admission refuses (a field
   * that cannot change once the VM was created) comes back as SpecRefused.
   * `made`: what a create made, or the VM's object it found in its place.
   */
  private async writeOwned<T extends ObjectWithUid>(w: OwnedWrite<T>): Promise<{ readonly refusal: WriteConflict | SpecRefused } | { readonly made?: T }> {
    let target: T & OwnedRef;
    let foundInPlace = false;
    if (w.desired.metadata.uid) {
      target = w.desired as T & OwnedRef;
    } else {
      const created = await this.d.ssa.create(w.desired);
      if (created.created) return { made: created.object };
      if ('invalid' in created) return { refusal: createRefused(w.desired, created.invalid) };
      const conflict = w.conflictOf(created.existing);
      if (conflict) return { refusal: conflict };
      if (w.upToDate(created.existing)) return { made: created.existing };
      foundInPlace = true;
      target = { ...w.desired, metadata: { ...w.desired.metadata, uid: created.existing.metadata.uid ?? '' } } as T & OwnedRef;
    }
    const updated = await this.d.ssa.update(target);
    if (updated.applied) return foundInPlace ? { made: updated.object } : {};
    return { refusal: 'invalid' in updated ? specRefused(target, updated.invalid) : fieldConflict(w.reason, target, updated.conflict) };
  }

  private upToDate(desired: InfraMachine): boolean {
    const live = this.d.machines.get(desired.kind)?.get(key(desired));
    return !!live && this.contains(live, desired);
  }

  private contains(live: InfraMachine, desired: InfraMachine): boolean {
    return containsAll(live.metadata, desired.metadata) && containsAll(live.spec, desired.spec);
  }

  /** Set spec.deletionPolicy of a machine the VM controls, being deleted: only that object (its uid is the patch's precondition). */
  private async setDeletionPolicy(machine: InfraMachine, deletionPolicy: DeletionPolicy, log: Logger): Promise<void> {
    log.info({ infra: machine.kind, deletionPolicy }, 'Setting the deletion policy of the infrastructure machine before deleting it');
    const ref = {
      apiVersion: machine.apiVersion,
      kind: machine.kind,
      metadata: { name: machine.metadata.name ?? '', namespace: machine.metadata.namespace ?? '' },
    };
    const body = { metadata: { ...(machine.metadata.uid ? { uid: machine.metadata.uid } : {}) }, spec: { deletionPolicy } };
    try {
      await this.d.api.request('PATCH', await this.d.api.pathOf(ref), {
        body,
        contentType: 'application/merge-patch+json',
        query: { fieldManager: FieldManager.controller },
      });
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    }
  }

  /**
   * Delete an infra machine the VM controls: only that object as it was judged (uid and
   * resourceVersion preconditions), never one made in its place since, nor one changed since — such
   * as one the garbage collector has just let go of (an orphaning delete of the VM): a 409 retries.
   */
  private async deleteInfra(infra: InfraMachine, log: Logger): Promise<void> {
    log.info({ infra: infra.kind }, 'Deleting infrastructure machine');
    const { uid, resourceVersion } = infra.metadata;
    const preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
    try {
      await this.d.api.request(
        'DELETE',
        await this.d.api.pathOf({
          apiVersion: infra.apiVersion,
          kind: infra.kind,
          metadata: { name: infra.metadata.name ?? '', namespace: infra.metadata.namespace ?? '' },
        }),
        {
          ...(uid || resourceVersion ? { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions } } : {}),
        },
      );
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    }
  }

  /** The Secret the user-data is rendered into, read by name: what ownership and a comparison need, nothing else of its data. */
  private async readRenderedSecret(vm: VirtualMachine): Promise<RenderedSecretState> {
    try {
      const live = await this.d.api.get<SecretRead>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: userDataSecretName(vm), namespace: vm.metadata.namespace ?? '' },
      });
      return { state: 'Present', secret: toLiveSecret(live) };
    } catch (err) {
      if (err instanceof ApiStatusError && err.code === 404) return { state: 'Absent' };
      throw err;
    }
  }

  private async writeStatus(vm: VirtualMachine, planned: NonNullable<VmPlan['status']>, log: Logger): Promise<void> {
    const before = vm.status?.conditions?.find((c) => c.type === ConditionType.Scheduled);
    const status = planned as Record<string, unknown>;
    if (!(await applyStatus(this.d.ssa, vm as never, status))) return;
    const after = planned.conditions?.find((c) => c.type === ConditionType.Scheduled);
    if (after && (after.status !== before?.status || after.reason !== before?.reason)) {
      log.info({ reason: after.reason }, after.status === 'True' ? 'Scheduled' : 'Not scheduled');
      void this.d.events.record(vm as never, after.status === 'True' ? 'Normal' : 'Warning', after.reason, after.message);
    }
  }
}

const key = (obj: { metadata: { name?: string; namespace?: string } }): string => keyOf(obj as never);

/** The VM as the finalizer patches want it: with its finalizers and the resourceVersion they test. */
function finalizerRef(vm: VirtualMachine): {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; finalizers?: string[]; resourceVersion?: string };
} {
  const { name = '', namespace = '', finalizers, resourceVersion } = vm.metadata;
  return {
    apiVersion: vm.apiVersion,
    kind: vm.kind,
    metadata: { name, namespace, ...(finalizers ? { finalizers } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
  };
}

function toLiveSecret(secret: SecretRead | UserDataSecretObject): LiveSecret {
  const { name, uid, ownerReferences } = secret.metadata;
  const value = secret.data?.value;
  return {
    metadata: { ...(name !== undefined ? { name } : {}), ...(uid !== undefined ? { uid } : {}), ...(ownerReferences ? { ownerReferences } : {}) },
    ...(secret.type !== undefined ? { type: secret.type } : {}),
    ...(value !== undefined ? { value } : {}),
  };
}

function stateOf(kind: string, object: InfraMachine | undefined): InfraState {
  if (!object) return { kind, state: 'Absent' };
  return { kind, state: object.metadata.deletionTimestamp ? 'Terminating' : 'Present', object };
}
