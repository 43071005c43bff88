// Provider (any backend): connect with fresh credentials, discover, publish
// failure domains and ProviderReachable/Ready. Generic over Backend. Its
// finalizer keeps a Provider until no machine has a VM on it (ADR 19).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { Condition } from '../../../infra/api/meta.js';
import { Finalizer } from '../../../infra/api/well-known.js';
import { describeBackendFailure } from '../backend-failure.js';
import { BackendError, BackendErrorKind } from '../../backends/backend-error.js';
import type { RunningBackend } from '../../backends/descriptor.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, type ReconcileResult } from '../../runtime/errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ensureFinalizer, removeFinalizer } from '../../runtime/finalizers.js';
import type { Informer } from '../../runtime/informer.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { applyStatusOrRefusal } from '../../runtime/status-writer.js';
import { isPaused } from '../paused.js';
import { resolveConnection } from './connection.js';
import { decideProviderStatus, refusedProviderStatus, type DiscoveryOutcome } from './decide.js';
import { findOlderOnEndpoint } from './endpoint.js';
import { describeMachinesInUse, endpointSharedEvent, reachabilityEvent } from './status-events.js';

export class ProviderReconciler implements Reconciler {
  readonly name = 'provider';
  readonly kind = 'Provider';

  constructor(
    private readonly backend: RunningBackend,
    private readonly providers: Informer<Provider>,
    private readonly api: KubeApi,
    private readonly ssa: ServerSideApply,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    /** How often the inventory is read again without events. */
    private readonly rediscoverMs: number,
    /** The machines (`ns/name`) that may have a VM on a Provider (machines-on-provider.ts); the role wakes the Provider when they go. */
    private readonly machinesOn: (provider: Provider) => readonly string[],
    /**
     * A backend that accepts connections but does not answer (frozen, partitioned) would
     * otherwise look reachable until its client's own timeout, minutes later.
     */
    private readonly discoverTimeoutMs = 60_000,
  ) {}

  /** Load, hold or release the Provider, discover (unless paused), then one status write and the Events it calls for. */
  async reconcile(key: string, log: Logger, signal?: AbortSignal): Promise<ReconcileResult> {
    const provider = this.providers.get(key);
    if (!provider || provider.spec.providerClassRef.name !== this.backend.name) return done;
    if ((await this.ensureInUseFinalizer(provider, log)) === 'released') return done;
    const outcome = isPaused(provider) ? undefined : await this.discover(provider, log, signal);
    const olderOnEndpoint = findOlderOnEndpoint(provider, this.providers.list());
    const now = this.clock.now();
    const before = provider.status?.conditions;
    // What discovery found, or, should the API server refuse it, that it did (keeping what was written before).
    const { written, status, refusal } = await applyStatusOrRefusal(
      this.ssa,
      provider,
      decideProviderStatus(provider, outcome, now, olderOnEndpoint),
      (message) => refusedProviderStatus(provider, message, now),
    );
    if (refusal !== undefined) log.warn({ err: refusal }, 'Provider status refused by the API server');
    if (written) this.recordStatusEvents(provider, before, status.conditions, refusal, log);
    return { requeueAfterMs: this.rediscoverMs };
  }

  /**
   * The finalizer holds the Provider while a machine may have a VM on it: added in its own patch
   * (this pass goes on: the Provider's informer does not wake on finalizers), removed once a
   * Provider being deleted has no such machine left (then the pass ends).
   */
  private async ensureInUseFinalizer(provider: Provider, log: Logger): Promise<'held' | 'released'> {
    if (provider.metadata.deletionTimestamp === undefined) {
      await ensureFinalizer(this.api, provider, Finalizer.providerInUse);
      return 'held';
    }
    const inUse = this.machinesOn(provider);
    if (inUse.length === 0) {
      await removeFinalizer(this.api, provider, Finalizer.providerInUse);
      return 'released';
    }
    // Still served (discovery, reachability) while its machines are deleted through it.
    log.info({ machines: inUse.length }, 'Provider in use; deleting it waits for its machines');
    const message = `being deleted: waits until its machines with VMs on it are deleted (${describeMachinesInUse(inUse)})`;
    void this.events.record(provider, 'Warning', Reason.ProviderInUse, message);
    return 'held';
  }

  /** After a status write: that it was refused, a change of reachability, an endpoint newly shared. */
  private recordStatusEvents(
    provider: Provider,
    before: readonly Condition[] | undefined,
    after: readonly Condition[] | undefined,
    refusal: string | undefined,
    log: Logger,
  ): void {
    if (refusal !== undefined) void this.events.record(provider, 'Warning', Reason.StatusRefused, refusal);
    const reachability = reachabilityEvent(before, after);
    if (reachability) void this.events.record(provider, reachability.type, reachability.reason, reachability.message);
    const shared = endpointSharedEvent(before, after);
    if (shared) {
      log.warn({ reason: shared.reason }, 'Another Provider names the same endpoint');
      void this.events.record(provider, shared.type, shared.reason, shared.message);
    }
  }

  private async discover(provider: Provider, log: Logger, signal: AbortSignal | undefined): Promise<DiscoveryOutcome> {
    const resolved = await resolveConnection(this.api, provider, this.backend.credentialKeys);
    if (!resolved.ok) return resolved;
    const deadline = AbortSignal.timeout(this.discoverTimeoutMs);
    try {
      return { ok: true, ...(await this.backend.discover(provider, resolved.connection, signal ? AbortSignal.any([signal, deadline]) : deadline)) };
    } catch (err) {
      if (signal?.aborted) throw err;
      const failure = deadline.aborted
        ? new BackendError(BackendErrorKind.Unreachable, `no answer to discovery within ${this.discoverTimeoutMs / 1000} s`, { code: 'Timeout' })
        : err;
      const { reason, message } = describeBackendFailure(failure, Reason.InventoryFailed);
      log.warn({ backend: this.backend.name, reason, err: message }, 'Discovery failed');
      return { ok: false, reason, message };
    }
  }
}
