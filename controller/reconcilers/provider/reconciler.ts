// Provider (any backend): connect with fresh credentials, discover, publish
// failure domains and ProviderReachable/Ready. Generic over Backend. Its
// finalizer keeps a Provider until no machine has a VM on it (ADR 19).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { Finalizer } from '../../../infra/api/well-known.js';
import { describeBackendFailure } from '../backend-failure.js';
import { BackendError, BackendErrorKind } from '../../backends/backend-error.js';
import type { RunningBackend } from '../../backends/descriptor.js';
import type { Clock } from '../../runtime/clock.js';
import { findCondition } from '../../runtime/conditions.js';
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

  async reconcile(key: string, log: Logger, signal?: AbortSignal): Promise<ReconcileResult> {
    const provider = this.providers.get(key);
    if (!provider || provider.spec.providerClassRef.name !== this.backend.name) return done;
    if (provider.metadata.deletionTimestamp !== undefined) {
      const inUse = this.machinesOn(provider);
      if (inUse.length === 0) {
        await removeFinalizer(this.api, provider, Finalizer.providerInUse);
        return done;
      }
      // Still served (discovery, reachability) while its machines are deleted through it.
      const shown = inUse.slice(0, 10).join(', ') + (inUse.length > 10 ? `, and ${inUse.length - 10} more` : '');
      log.info({ machines: inUse.length }, 'Provider in use; deleting it waits for its machines');
      void this.events.record(provider, 'Warning', Reason.ProviderInUse, `being deleted: waits until its machines with VMs on it are deleted (${shown})`);
    } else {
      // Added in its own patch; this pass goes on (the Provider's informer does not wake on finalizers).
      await ensureFinalizer(this.api, provider, Finalizer.providerInUse);
    }
    const outcome = isPaused(provider) ? undefined : await this.discover(provider, log, signal);
    const olderOnEndpoint = findOlderOnEndpoint(provider, this.providers.list());
    const now = this.clock.now();
    const before = findCondition(provider.status?.conditions, ConditionType.ProviderReachable);
    const shareBefore = findCondition(provider.status?.conditions, ConditionType.EndpointExclusive);
    // What discovery found, or, should the API server refuse it, that it did (keeping what was written before).
    const { written, status, refusal } = await applyStatusOrRefusal(
      this.ssa,
      provider,
      decideProviderStatus(provider, outcome, now, olderOnEndpoint),
      (message) => refusedProviderStatus(provider, message, now),
    );
    if (refusal !== undefined) {
      log.warn({ err: refusal }, 'Provider status refused by the API server');
      if (written) void this.events.record(provider, 'Warning', Reason.StatusRefused, refusal);
    }
    if (written) {
      const after = findCondition(status.conditions, ConditionType.ProviderReachable);
      if (after && (after.status !== before?.status || after.reason !== before?.reason)) {
        void this.events.record(provider, after.status === 'True' ? 'Normal' : 'Warning', after.reason, after.message || 'Connected');
      }
      const shareAfter = findCondition(status.conditions, ConditionType.EndpointExclusive);
      if (shareAfter?.status === 'False' && (shareBefore?.status !== 'False' || shareBefore.message !== shareAfter.message)) {
        log.warn({ reason: shareAfter.reason }, 'Another Provider names the same endpoint');
        void this.events.record(provider, 'Warning', shareAfter.reason, shareAfter.message);
      }
    }
    return { requeueAfterMs: this.rediscoverMs };
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
