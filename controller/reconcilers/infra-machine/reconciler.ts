// A provider role's machine kind (any backend). A pass does one step and
// writes status at most once: the finalizer with the identity (spec.providerID)
// and return; where the VM is to be created (status.placement) and return;
// then the backend converges the VM and the status says what it found. A
// deletion reports Deleting and returns, then destroys or releases the VM.
// Generic over MachineBackend (STYLE §2): adding a backend touches nothing here.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import type { DeletionPolicy } from '../../../infra/api/machine-fields.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type { InfraMachine, MachinePlacementRecord } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { Finalizer } from '../../../infra/api/well-known.js';
import type { Connection, EnsureResult, MachineAction, MachineObservation, MachineRequest } from '../../backends/backend.js';
import type { RunningBackend } from '../../backends/descriptor.js';
import type { Clock } from '../../runtime/clock.js';
import { findCondition } from '../../runtime/conditions.js';
import type { Reconciler } from '../../runtime/controller.js';
import { blocked, done, inProgress, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ensureFinalizer, finalizerPart, hasFinalizer, removeFinalizer, type FinalizerWrite } from '../../runtime/finalizers.js';
import { keyOf, type Informer } from '../../runtime/informer.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { Expectations, wholeStatus } from '../../runtime/expectations.js';
import { SharedReads } from '../../runtime/shared-reads.js';
import { applyStatusOrRefusal } from '../../runtime/status-writer.js';
import { describeBackendFailure } from '../backend-failure.js';
import { pausedOwningCluster } from '../owning-cluster.js';
import { isPaused } from '../paused.js';
import { resolveConnection } from '../provider/connection.js';
import { decideMachineStatus, isDeletionReported, isProvisioned, mayHaveCreated, taskPollDelay, type InfraMachineStatus, type PassOutcome } from './decide.js';
import { machineIdentity, type MachineIdentity } from './identity.js';
import { findMacInUse, nicsFieldOf, type MacInUse } from './mac-addresses.js';
import { deletePoolClaims, ensureClaimedAddresses, keepPoolClaims } from './ip-address-claims.js';
import { deletingMessage, deletionEvents, deletionPolicyOf, keepsClaims, type VmFate } from './decide-deletion.js';
import { awaitsCapiMachine, capiOwner, getOwningMachine, type CapiMachine } from '../owning-machine.js';
import { decideMachinePlacement, decidePlacementChange, toMachineRequest, toPlacementRecord } from './machine-request.js';
import { readUserData } from './user-data.js';
import { describeUnpublished, publishedTargets, unpublishedTargets } from './published-targets.js';
import { decideRestart, restartAfter, restartEvent, withRestartPower, type RestartPlan } from './restart.js';

/**
 * Ready=False reasons that are steps of a normal pass, not trouble: no Warning Event. Every machine a
 * CAPI MachineSet makes waits for its Machine's failure domain and bootstrap data, and every VM is
 * Provisioning while its create runs (CreateStarted and Created say so as Normal Events).
 */
const QUIET_REASONS: ReadonlySet<string> = new Set([
  Reason.WaitingForFailureDomain,
  Reason.Provisioning,
  Reason.WaitingForBootstrapData,
  Reason.WaitingForAddress,
  Reason.WaitingForIPAddress,
  Reason.Pending,
  Reason.Stopping,
  Reason.Restarting,
  Reason.Deleting,
]);

/** A machine whose VM the backend watches looks again this soon (a poll period at least) when no change woke it. */
const WATCHED_POLL_MS = 60_000;

/** The least time a new machine of CAPI's may go without a status, waiting to be taken over and placed (withinQuietStart). */
const QUIET_START_MS = 5_000;

export interface InfraMachineTimings {
  /** Come back this soon while waiting for something that has no watch (guest IP, unless the backend watches its VMs; a Provider's failure domains). */
  readonly pollMs: number;
  /** Re-read a converged VM this often (power drift, addresses). */
  readonly resyncMs: number;
  /** Look at a running backend task (a clone) again this soon. @default 1000 */
  readonly taskPollMs?: number;
}

/** A pass: what the status says, and when to come back (or an error to retry with backoff). */
interface PassResult {
  readonly outcome: PassOutcome;
  readonly result?: ReconcileResult;
  readonly retry?: unknown;
  /** What the pass did about spec.restartRequestedAt. */
  readonly restart?: RestartPlan;
}

/** A pass with nothing to say yet: only when to look again. */
interface QuietPass {
  readonly quiet: ReconcileResult;
}

type KnownIdentity = Extract<MachineIdentity, { ok: true }>;

/** `providerDeleting`: the Provider was found, and is being deleted. */
type Blocked = { readonly ok: false; readonly reason: Reason; readonly message: string; readonly providerDeleting?: boolean };
interface Resolved {
  readonly ok: true;
  readonly connection: Connection;
  readonly request: MachineRequest<unknown>;
  /** Where the VM is, or is to be created: status.placement once recorded. */
  readonly placement: MachinePlacementRecord;
  /** Whether `placement` is the record (false: resolved from the spec, nothing recorded yet). */
  readonly recorded: boolean;
  readonly providerDeleting: boolean;
  /** The machine names another place than its record (describePlacementChange). */
  readonly placementChange?: string;
}

export class InfraMachineReconciler implements Reconciler {
  readonly name: string;
  readonly kind: string;
  private readonly finalizer: string;
  /** The spec list of interfaces that may fix a MAC, if the kind has one. */
  private readonly nicsField: string | undefined;
  /**
   * The status this process last wrote, until the cache shows it: a pass that runs before the watch
   * delivers it (its own update event, a poll) must neither start a second create (status.taskRef)
   * nor take a provisioned machine for a new one, nor move a condition's transition time. Only the
   * provider writes an InfraMachine's status, all of it.
   */
  private readonly written = new Expectations(wholeStatus<InfraMachineStatus>());
  /**
   * The finalizer and providerID this process wrote, until the cache shows them: a pass in between,
   * started by another event, would send the same patch again and see its precondition fail. Held a
   * poll period at most, in case the watch never shows the write.
   */
  private readonly stamped: Expectations<InfraMachine, FinalizerWrite>;
  /** The Provider Secrets, CAPI Machine and bootstrap Secret a pass reads: one GET for the passes of one second. */
  private readonly reads: SharedReads;
  /**
   * The CAPI Cluster of the pause check: passes join a GET in flight, and none is kept. clusterctl
   * move pauses the Cluster, then copies the machines: no write may follow an answer older than that.
   */
  private readonly clusterReads: SharedReads;

  constructor(
    private readonly backend: RunningBackend,
    private readonly machines: Informer<InfraMachine>,
    private readonly providers: Informer<Provider>,
    private readonly images: Informer<VMImage>,
    private readonly api: KubeApi,
    private readonly ssa: ServerSideApply,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly timings: InfraMachineTimings,
  ) {
    this.kind = backend.api.machine.kind;
    this.name = this.kind.toLowerCase();
    this.finalizer = Finalizer.infraMachine(this.kind);
    this.stamped = new Expectations(finalizerPart(this.finalizer), { maxAgeMs: timings.pollMs });
    this.nicsField = nicsFieldOf(backend.api.machine);
    this.reads = new SharedReads(api);
    this.clusterReads = new SharedReads(api, 0);
  }

  /**
   * Load, decide, act, then one status write for the pass (STYLE §2). Returns
   * right after adding the finalizer; a long backend task is started and
   * remembered in status.taskRef, never awaited here.
   */
  async reconcile(key: string, log: Logger, signal?: AbortSignal): Promise<ReconcileResult> {
    const cached = this.machines.get(key);
    if (!cached) {
      this.written.forget(key);
      this.stamped.forget(key);
      return done;
    }
    const machine = this.written.observe(key, cached);
    const paused = await this.pausedStep(machine);
    if (paused) return paused;
    const identity = machineIdentity(this.backend.api.providerIDScheme, machine);
    if (machine.metadata.deletionTimestamp) return this.reconcileDelete(machine, identity, log, signal);
    const handover = this.awaitingHandover(machine);
    if (handover) return handover;
    if (await this.stampStep(machine, identity, log)) return done;
    const passed = await this.pass(machine, identity, log, signal);
    if ('quiet' in passed) return passed.quiet;
    const { outcome, result, retry, restart } = passed;
    const status = await this.writeStatus(machine, outcome);
    // Written first, so the user sees why; then the queue's backoff retries.
    if (retry !== undefined) throw retry;
    if (outcome.kind === 'observed') {
      for (const action of outcome.observation?.actions ?? []) this.recordAction(machine, action, outcome.observation, outcome.uuid);
      for (const warning of outcome.observation?.warnings ?? []) void this.events.record(machine, 'Warning', warning.reason, warning.message);
    }
    return this.restartStep(machine, restart, status) ?? result ?? this.nextLook(machine, outcome, status);
  }

  /** Paused (by annotation or its CAPI Cluster, e.g. during clusterctl move): not even a deletion proceeds, as in CAPI. */
  private async pausedStep(machine: InfraMachine): Promise<ReconcileResult | undefined> {
    const pausedCluster = await pausedOwningCluster(this.clusterReads, machine);
    if (!isPaused({ metadata: machine.metadata }, pausedCluster)) return undefined;
    await this.writeStatus(machine, { kind: 'paused', ...(pausedCluster ? { pausedCluster } : {}) });
    // An unpaused Cluster sends no event here: look again.
    return pausedCluster ? waiting(this.timings.pollMs) : done;
  }

  /**
   * CAPI's MachineSet makes the machine and, moments later, the Machine that takes it over (its owner
   * reference changing starts the next pass). Meanwhile nothing is written: the MachineSet patches the
   * machine again with a resourceVersion precondition, and a write of ours in between makes that patch
   * conflict and retry, slowing every Machine it makes after. Nothing can be created before the Machine
   * names the bootstrap data; a machine still waiting after a while goes on and says so.
   */
  private awaitingHandover(machine: InfraMachine): ReconcileResult | undefined {
    if (!awaitsCapiMachine(machine) || hasFinalizer(machine, this.finalizer)) return undefined;
    return this.withinQuietStart(machine);
  }

  /**
   * A Machine of a MachineDeployment has no failure domain until the controller gives its machine one
   * (spec.failureDomain, whose write starts the next pass), moments after the hand-over. A status saying
   * so would be written, then mirrored on the Machine by CAPI, for every Machine; it is said only by a
   * machine with no status yet that still waits after a while.
   */
  private awaitingFailureDomain(machine: InfraMachine, blockedBy: Blocked): ReconcileResult | undefined {
    if (blockedBy.reason !== Reason.WaitingForFailureDomain || !capiOwner(machine) || machine.status?.conditions?.length) return undefined;
    return this.withinQuietStart(machine);
  }

  /**
   * While a new machine may say nothing yet: CAPI's steps and the controller's placement take
   * seconds under load (a Machine took its machine over 1 to 2 s after the MachineSet made it, with
   * 200 made at once), and a poll period at least. creationTimestamp counts whole seconds, so the
   * age read from it may be up to a second more than the real one; that second is added back.
   */
  private withinQuietStart(machine: InfraMachine): ReconcileResult | undefined {
    const grace = Math.max(this.timings.pollMs, QUIET_START_MS) + 1000;
    const age = this.clock.now().getTime() - Date.parse(machine.metadata.creationTimestamp ?? '');
    return age >= 0 && age < grace ? waiting(grace - age) : undefined;
  }

  /**
   * The finalizer and the providerID in one write of their own, before anything exists on the backend (a crash
   * from here on finds the VM again by it); true when the pass ends here. The next pass starts on the watch
   * event of that write.
   */
  private async stampStep(machine: InfraMachine, identity: MachineIdentity, log: Logger): Promise<boolean> {
    const key = keyOf(machine);
    // Written by an earlier pass; the event of that write starts the next one.
    if (this.stamped.awaits(key, machine)) return true;
    const stamp = identity.ok && identity.unwritten ? { path: ['spec', 'providerID'] as const, value: identity.providerID } : undefined;
    if (!(await ensureFinalizer(this.api, machine, this.finalizer, stamp))) return false;
    this.stamped.expect(key, machine, stamp ? { stamp } : {});
    if (stamp) log.info({ providerID: stamp.value }, 'Set providerID');
    return true;
  }

  /** The Event of a restart that began, ended or was skipped in this pass; the next pass at once when the VM just went off for it. */
  private restartStep(machine: InfraMachine, plan: RestartPlan | undefined, status: InfraMachineStatus): ReconcileResult | undefined {
    if (!plan) return undefined;
    const event = restartEvent(machine.status?.restart, status.restart, plan);
    if (event) void this.events.record(machine, 'Normal', event.reason, event.message);
    // The next pass powers it on (a status write of its own wakes no pass).
    return plan.kind === 'drive' && plan.phase === 'ShuttingDown' && status.restart?.phase === 'PoweringOn' ? inProgress(0) : undefined;
  }

  /** One step over the backend, as an outcome for the status; errors to retry with backoff are thrown after it is written. */
  private async pass(machine: InfraMachine, identity: MachineIdentity, log: Logger, signal: AbortSignal | undefined): Promise<PassResult | QuietPass> {
    if (!identity.ok) return { outcome: { kind: 'blocked', reason: Reason.ProvisionFailed, message: identity.message } };
    const provisioned = isProvisioned(machine);
    const resolved = await this.resolve(machine, identity, { needUserData: !provisioned, claimAddresses: true, checkTargets: !provisioned });
    if (!resolved.ok) {
      const quiet = this.awaitingFailureDomain(machine, resolved);
      return quiet ? { quiet } : { outcome: { kind: 'blocked', reason: resolved.reason, message: resolved.message } };
    }
    // A providerID this machine does not derive (a move, or a hand-written one) adopts a marked VM, never creates one.
    const mayCreate = !provisioned && identity.derived;
    if (mayCreate && !resolved.recorded) return this.recordPlacement(machine, resolved, log);
    const options = {
      mayCreate,
      firstBoot: !provisioned,
      specChanged: machine.status?.observedGeneration !== machine.metadata.generation,
      log,
      ...(signal ? { signal } : {}),
    };
    const restart = decideRestart(machine, provisioned);
    if (restart.kind === 'drive') log.info({ restartRequestedAt: restart.requestedAt, phase: restart.phase }, 'Restarting the VM');
    let ensured: EnsureResult;
    try {
      ensured = await this.backend.machines.ensure(resolved.connection, withRestartPower(resolved.request, restart), options);
    } catch (err) {
      if (signal?.aborted) throw err;
      return this.ensureFailed(err, resolved, log);
    }
    return { ...this.ensuredPass(machine, identity, resolved, ensured, restart), restart };
  }

  /**
   * Where, before anything can exist there: from now on the VM is looked for and deleted there only.
   * A Provider on its way out takes no new VM (its finalizer waits for the ones it has), and a MAC
   * another machine holds waits for the holder to go or this machine to get another MAC.
   */
  private recordPlacement(machine: InfraMachine, resolved: Resolved, log: Logger): PassResult {
    const { placement } = resolved;
    if (resolved.providerDeleting) {
      const message = `Provider ${placement.provider} is being deleted: no new VM is created on it`;
      return { outcome: { kind: 'blocked', reason: Reason.ProviderNotFound, message }, result: waiting(this.timings.resyncMs) };
    }
    const macInUse = this.macInUse(machine, placement.provider);
    // Looked at again later; an update of the machine wakes it at once.
    if (macInUse) return { outcome: { kind: 'blocked', reason: Reason.MacAddressInUse, message: macInUse.message }, result: this.untilFixed() };
    // The next pass, at once (a status write of its own wakes no pass), creates the VM; it sees the record (expectations).
    log.info({ Provider: placement.provider, failureDomain: placement.failureDomain }, 'Recording where the VM is created');
    return { outcome: { kind: 'placing', placement }, result: inProgress(0) };
  }

  /**
   * The backend pass threw. A spec the backend refuses (no such template, datastore…) or a failed task
   * waits for a fix (untilFixed); anything else retries with the queue's backoff.
   */
  private ensureFailed(err: unknown, resolved: Resolved, log: Logger): PassResult {
    const failure = describeBackendFailure(err, Reason.ProvisionFailed);
    log.warn({ reason: failure.reason, err: failure.message }, 'Backend pass failed');
    // A remembered task is over when it failed, or when what it made is refused (a duplicate name not ours).
    const taskEnded = failure.taskFailed || (resolved.request.taskRef !== undefined && failure.retry === 'wait');
    const outcome: PassOutcome = { kind: 'blocked', reason: failure.reason, message: failure.message, taskEnded };
    return failure.retry === 'wait' ? { outcome, result: this.untilFixed() } : { outcome, retry: err };
  }

  /** What the backend answered: a task under way (its actions as Events), a VM this machine may not look for, or the VM as found. */
  private ensuredPass(machine: InfraMachine, identity: KnownIdentity, resolved: Resolved, ensured: EnsureResult, restartPlan: RestartPlan): PassResult {
    const now = this.clock.now();
    const seen = ensured.state === 'Present' ? ensured.observation.powerState : undefined;
    const restart = ensured.state === 'Absent' ? undefined : restartAfter(restartPlan, seen, machine.status?.restart, now);
    const restartField = restart ? { restart } : {};
    if (ensured.state === 'InProgress') {
      for (const action of ensured.actions) this.recordAction(machine, action, undefined, identity.uuid, ensured.taskRef);
      const delay = taskPollDelay(machine.status, now, this.timings.taskPollMs ?? 1000);
      const outcome: PassOutcome = {
        kind: 'inProgress',
        taskRef: ensured.taskRef,
        message: ensured.message,
        placement: resolved.placement,
        ...(ensured.reason ? { reason: ensured.reason } : {}),
        ...restartField,
      };
      return { outcome, result: inProgress(delay) };
    }
    if (ensured.state === 'Absent' && !isProvisioned(machine) && !identity.derived) {
      const message = `spec.providerID ${identity.providerID} is not the one the provider derives for this machine, and no VM of this machine has it: only the provider writes spec.providerID`;
      return { outcome: { kind: 'blocked', reason: Reason.ProviderIDNotDerived, message }, result: waiting(this.timings.resyncMs) };
    }
    const observation = ensured.state === 'Present' ? ensured.observation : undefined;
    const placementChange = resolved.placementChange !== undefined ? { placementChange: resolved.placementChange } : {};
    return {
      outcome: {
        kind: 'observed',
        observation,
        placement: resolved.placement,
        ...placementChange,
        backendStatus: observation?.statusFields ?? {},
        uuid: identity.uuid,
        ...restartField,
      },
    };
  }

  /** A pass blocked on what someone must fix looks again ever later, up to minutes (and at once when the machine changes). */
  private untilFixed(): ReconcileResult {
    return blocked(Math.min(this.timings.resyncMs, 6 * this.timings.pollMs));
  }

  /** A MAC the machine fixes that a machine on the same backend endpoint holds (mac-addresses.ts), from the caches. */
  private macInUse(machine: InfraMachine, providerName: string): MacInUse | undefined {
    if (this.nicsField === undefined) return undefined;
    const provider = this.providers.get(`${machine.metadata.namespace ?? ''}/${providerName}`);
    if (!provider) return undefined;
    return findMacInUse(machine, provider, {
      backend: this.backend.name,
      nicsField: this.nicsField,
      machines: this.machines.list(),
      providers: (namespace) => this.providers.list(namespace),
    });
  }

  /** When to look again after a pass that went through. */
  private nextLook(machine: InfraMachine, outcome: PassOutcome, status: InfraMachineStatus): ReconcileResult {
    const ready = findCondition(status.conditions, ConditionType.Ready);
    if (outcome.kind === 'observed' && !outcome.observation && !isProvisioned(machine)) return waiting(this.timings.pollMs);
    if (ready?.status === 'True' || ready?.reason === Reason.BackendMissing) return waiting(this.timings.resyncMs);
    // The backend wakes the machine when its VM changes: a poll only in case a wake-up was lost (a watch restarting).
    const watched = outcome.kind === 'observed' && outcome.observation?.watched === true && outcome.observation.pending === undefined;
    return waiting(watched ? Math.max(this.timings.pollMs, Math.min(this.timings.resyncMs, WATCHED_POLL_MS)) : this.timings.pollMs);
  }

  /**
   * The VM destroyed or released as spec.deletionPolicy says (decide-deletion.ts), the claims
   * deleted or kept to match, the Events that say so, then the finalizer.
   */
  private async reconcileDelete(machine: InfraMachine, identity: MachineIdentity, log: Logger, signal: AbortSignal | undefined): Promise<ReconcileResult> {
    if (!hasFinalizer(machine, this.finalizer)) return done;
    const policy = deletionPolicyOf(machine);
    // Ready covers the deletion too (InfraMachine contract): Deleting, in a pass of its own, before the backend is asked.
    if (!isDeletionReported(machine.status)) {
      await this.writeStatus(machine, { kind: 'deleting', message: deletingMessage(policy, identity.ok ? identity.uuid : undefined) });
      // At once: a status write of its own wakes no pass.
      return inProgress(0);
    }
    const fate: VmFate | { readonly wait: ReconcileResult } = identity.ok ? await this.letVmGo(machine, identity, policy, log, signal) : { kind: 'none' };
    if ('wait' in fate) return fate.wait;
    // Deleted, the claims' addresses go back to their pools before the machine does (the owner reference would
    // collect the claims too, but only after the machine is gone); kept, they outlive it with the VM.
    const kept = keepsClaims(policy, fate);
    const claims = { kept, names: kept ? await keepPoolClaims(this.api, machine) : await deletePoolClaims(this.api, machine) };
    for (const event of deletionEvents(fate, identity.ok ? identity.uuid : '', claims))
      void this.events.record(machine, event.type, event.reason, event.message);
    await removeFinalizer(this.api, machine, this.finalizer);
    return done;
  }

  /** The VM destroyed (Delete) or released (Retain) where it was created, or left where nothing reaches it; or when to look again. */
  private async letVmGo(
    machine: InfraMachine,
    identity: KnownIdentity,
    policy: DeletionPolicy,
    log: Logger,
    signal: AbortSignal | undefined,
  ): Promise<VmFate | { readonly wait: ReconcileResult }> {
    const resolved = await this.resolve(machine, identity, { needUserData: false, claimAddresses: false, checkTargets: false });
    if (!resolved.ok) {
      // No providerID was written (as far as this cache knows) and no backend to ask: nothing was created.
      if (identity.unwritten) return { kind: 'none' };
      // No place was ever recorded (it precedes any create), no task, never provisioned: nothing to wait for,
      // e.g. a machine whose failure domain was never published.
      if (!mayHaveCreated(machine)) return { kind: 'none', nothingCreated: resolved.message };
      // The Provider is gone, or is being deleted with what reaches its backend (often: its namespace is being
      // deleted): nothing can reach the VM, and waiting would hold the namespace forever (ADR 13, 19).
      if (resolved.reason === Reason.ProviderNotFound || resolved.providerDeleting === true)
        return { kind: 'leftAlone', reason: Reason.ProviderNotFound, message: resolved.message };
      await this.writeStatus(machine, { kind: 'blocked', reason: Reason.DeletionFailed, message: resolved.message });
      return { wait: waiting(this.timings.pollMs) };
    }
    // Asked even without a providerID in the cache: it may lag the write that preceded a clone.
    const options = { log, ...(signal ? { signal } : {}) };
    const { connection, request } = resolved;
    try {
      const result =
        policy === 'Retain'
          ? await this.backend.machines.release(connection, request, options)
          : await this.backend.machines.destroy(connection, request, options);
      if (result.state === 'InProgress') {
        await this.writeStatus(machine, { kind: 'deleting', message: result.message, ...(result.reason ? { reason: result.reason } : {}) });
        return { wait: waiting(this.timings.taskPollMs ?? 1000) };
      }
      if (result.state === 'Released') return { kind: 'retained', ref: result.ref, provider: resolved.placement.provider };
      return result.state === 'Gone' && result.existed ? { kind: 'destroyed' } : { kind: 'none' };
    } catch (err) {
      if (signal?.aborted) throw err;
      const failure = describeBackendFailure(err, Reason.DeletionFailed);
      // Someone else's VM (a hand-set providerID): never destroyed nor released; the machine goes.
      if (failure.reason === Reason.VMNotOwned) return { kind: 'leftAlone', reason: Reason.VMNotOwned, message: failure.message };
      log.warn({ err: failure.message, deletionPolicy: policy }, policy === 'Retain' ? 'Releasing the VM failed' : 'Deleting the VM failed');
      await this.writeStatus(machine, { kind: 'blocked', reason: Reason.DeletionFailed, message: failure.message });
      throw err;
    }
  }

  /** Provider, failure domain, connection, addresses from IPAM pools (not while deleting) and (before the first boot) user-data. */
  private async resolve(
    machine: InfraMachine,
    identity: { uuid: string; providerID: string },
    want: { needUserData: boolean; claimAddresses: boolean; checkTargets: boolean },
  ): Promise<Resolved | Blocked> {
    // Read at most once per pass, and only when needed (a CAPI owner, user-data from the bootstrap Secret).
    let capiMachine: Promise<CapiMachine | undefined> | undefined;
    const owningMachine = (): Promise<CapiMachine | undefined> => (capiMachine ??= getOwningMachine(this.reads, machine));
    // A CAPI-owned machine asks its Machine every pass: its failure domain wins over spec.failureDomain (placement.ts).
    const machineFailureDomain = capiOwner(machine) ? (await owningMachine())?.spec?.failureDomain : undefined;
    const providers = this.providers.list(machine.metadata.namespace ?? '');
    const placement = decideMachinePlacement(this.backend.name, machine, providers, machineFailureDomain);
    if (!placement.ok) return placement;
    const providerDeleting = placement.provider.metadata.deletionTimestamp !== undefined;
    // Before the VM exists, nothing outside what its Provider publishes is named to the backend.
    if (want.checkTargets) {
      const unpublished = unpublishedTargets(this.backend.namedTargets(machine.spec), publishedTargets(placement.provider, this.images.list()));
      if (unpublished.length > 0) {
        return {
          ok: false,
          reason: Reason.TargetNotPublished,
          message: describeUnpublished(placement.provider.metadata.name ?? '', unpublished),
          providerDeleting,
        };
      }
    }
    const connection = await resolveConnection(this.reads, placement.provider, this.backend.credentialKeys);
    if (!connection.ok) return { ...connection, providerDeleting };
    const placementChange = decidePlacementChange(machine, machineFailureDomain);
    // Before the user-data, so the IPAM provider binds while the bootstrap data is still being made.
    let spec = machine.spec;
    if (want.claimAddresses) {
      const claimed = await ensureClaimedAddresses(this.api, machine);
      if (!claimed.ok) return { ...claimed, providerDeleting };
      spec = claimed.spec;
    }
    let userData: Buffer | undefined;
    if (want.needUserData) {
      // A machine CAPI made waits for the Machine that names its bootstrap data (it is made before the Machine owns it).
      const read = await readUserData(this.reads, machine, await owningMachine(), capiOwner(machine) !== undefined || awaitsCapiMachine(machine));
      if (!read.ok) return read;
      userData = read.userData;
    }
    return {
      ok: true,
      connection: connection.connection,
      placement: toPlacementRecord(machine, placement),
      recorded: machine.status?.placement !== undefined,
      providerDeleting,
      ...(placementChange !== undefined ? { placementChange } : {}),
      request: toMachineRequest(machine, { identity, spec, placement, userData }),
    };
  }

  private async writeStatus(machine: InfraMachine, outcome: PassOutcome): Promise<InfraMachineStatus> {
    const now = this.clock.now();
    const before = findCondition(machine.status?.conditions, ConditionType.Ready);
    // What this pass found, or, should the API server refuse it, that it did (keeping what was written before).
    const { written, status } = await applyStatusOrRefusal(this.ssa, machine, decideMachineStatus(machine, outcome, now), (message) =>
      decideMachineStatus(machine, { kind: 'blocked', reason: Reason.StatusRefused, message }, now),
    );
    if (written) {
      this.written.expect(keyOf(machine), machine, status);
      const after = findCondition(status.conditions, ConditionType.Ready);
      if (after && after.status === 'False' && (after.reason !== before?.reason || before?.status !== 'False') && !QUIET_REASONS.has(after.reason)) {
        void this.events.record(machine, 'Warning', after.reason, after.message);
      }
    }
    return status;
  }

  private recordAction(machine: InfraMachine, action: MachineAction, observation: MachineObservation | undefined, uuid: string, taskRef?: string): void {
    const vm = observation?.ref ? `VM ${observation.ref} (UUID ${uuid})` : `the VM with UUID ${uuid}`;
    const notes: Record<MachineAction, string> = {
      CreateStarted: `Creating the VM with UUID ${uuid} (task ${taskRef ?? ''})`,
      Created: `Created ${vm}`,
      Adopted: `Adopted ${vm}: found by its UUID, created by an earlier pass`,
      GuestDataWritten: `Wrote user-data and metadata for the first boot of ${vm}`,
      Reconfigured: `Reconfigured ${vm} to its spec's CPUs, memory and disk sizes`,
      PoweredOn: `Powered on ${vm}`,
      PoweredOff: `Powered off ${vm}`,
      Suspended: `Suspended ${vm}`,
    };
    void this.events.record(machine, 'Normal', action, notes[action]);
  }
}
