// A provider role shard's claims on its Providers (ADR 33): the annotation
// banlieue.io/provider-shard names the one shard that serves a Provider and its machines.
// A shard claims a Provider its selector matches once no live shard holds it, and lets go
// of one it no longer matches once its own passes on it are over (decideShardClaim). Both
// are merge patches preconditioned on the resourceVersion read: of two shards claiming at
// once, one wins.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../infra/api/conditions.js';
import { Annotation } from '../../../infra/api/well-known.js';
import { decideShardClaim, selectsProvider, shardOf, type ShardScope } from './decide.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { Informer } from '../../runtime/informer.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import { formatSelector } from '../../scheduler/label-selector.js';

/** What a shard reads of another's Lease (coordination.k8s.io/v1). */
interface LeaseRecord {
  readonly spec: { readonly holderIdentity?: string | null; readonly leaseDurationSeconds?: number; readonly renewTime?: string | null };
}

/** A Lease without leaseDurationSeconds: leader election's default. */
const DEFAULT_LEASE_SECONDS = 15;
/** While our own passes on a Provider we let go of run, or after a claim lost to a newer Provider: look again this soon. */
const SHORT_WAIT_MS = 1000;

/** The passes of a shard under way, by the key of the Provider they serve. */
export class ShardWork {
  private readonly passes = new Map<string, number>();

  /** Runs `pass` counted against `provider` (`ns/name`). */
  async run<T>(provider: string, pass: () => Promise<T>): Promise<T> {
    this.passes.set(provider, (this.passes.get(provider) ?? 0) + 1);
    try {
      return await pass();
    } finally {
      const left = (this.passes.get(provider) ?? 1) - 1;
      if (left === 0) this.passes.delete(provider);
      else this.passes.set(provider, left);
    }
  }

  busy(provider: string): boolean {
    return this.passes.has(provider);
  }
}

export class ShardClaimReconciler implements Reconciler {
  readonly name = 'provider-shard';
  readonly kind = 'Provider';
  /** Per claimant Lease: its record as last seen changed, and when, by this process's clock (as leader election judges expiry). */
  private readonly seen = new Map<string, { readonly record: string; readonly at: number }>();

  constructor(
    private readonly scope: ShardScope,
    private readonly providers: Informer<Provider>,
    private readonly api: KubeApi,
    private readonly events: EventRecorder,
    /** The namespace of the shards' Leases (the role's --leader-election-namespace). */
    private readonly leaseNamespace: string,
    private readonly work: ShardWork,
    private readonly clock: Clock,
  ) {}

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const provider = this.providers.get(key);
    if (!provider) return done;
    const claimedBy = shardOf(provider);
    const selected = selectsProvider(this.scope, provider);
    const other = selected && claimedBy !== undefined && claimedBy !== this.scope.shard;
    const claimant = other ? await this.claimantLease(claimedBy) : undefined;
    const decision = decideShardClaim(this.scope.shard, { selected, claimedBy, claimantLive: claimant?.live ?? false, busy: this.work.busy(key) });
    switch (decision) {
      case 'none':
        return done;
      case 'wait':
        // A live claimant lets go by a patch, which wakes us; its Lease expiring does not.
        return waiting(claimant ? claimant.recheckMs : SHORT_WAIT_MS);
      case 'claim':
        log.info({ shard: this.scope.shard, from: claimedBy }, 'Claiming the Provider for this shard');
        if (!(await this.patchClaim(provider, this.scope.shard))) return waiting(SHORT_WAIT_MS);
        void this.events.record(
          provider,
          'Normal',
          Reason.ShardClaimed,
          `Served by provider shard ${this.scope.shard} (selector ${formatSelector(this.scope.selector)})${claimedBy ? `, taken over from ${claimedBy}, whose Lease is not renewed` : ''}`,
        );
        return done;
      case 'release':
        log.info({ shard: this.scope.shard }, 'Releasing the Provider: the shard selector no longer matches its labels');
        if (!(await this.patchClaim(provider, null))) return waiting(SHORT_WAIT_MS);
        void this.events.record(
          provider,
          'Normal',
          Reason.ShardReleased,
          `Released by provider shard ${this.scope.shard}: its selector ${formatSelector(this.scope.selector)} no longer matches the Provider's labels`,
        );
        return done;
    }
  }

  /** The annotation set to `shard` (null: removed), if the Provider is still as we read it; false when it was not. */
  private async patchClaim(provider: Provider, shard: string | null): Promise<boolean> {
    const patch = { metadata: { resourceVersion: provider.metadata.resourceVersion, annotations: { [Annotation.providerShard]: shard } } };
    try {
      await this.api.request('PATCH', await this.api.pathOf(provider), { body: patch, contentType: 'application/merge-patch+json' });
      return true;
    } catch (err) {
      if (err instanceof ApiStatusError && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
  }

  /** Whether the claimant's Lease is held and was renewed within its duration, and when to look again. */
  private async claimantLease(name: string): Promise<{ live: boolean; recheckMs: number }> {
    let lease: LeaseRecord | undefined;
    try {
      lease = await this.api.request<LeaseRecord>('GET', `/apis/coordination.k8s.io/v1/namespaces/${this.leaseNamespace}/leases/${name}`);
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    }
    if (!lease?.spec.holderIdentity) return { live: false, recheckMs: SHORT_WAIT_MS };
    const now = this.clock.now().getTime();
    const record = JSON.stringify(lease.spec);
    const seen = this.seen.get(name);
    const at = seen?.record === record ? seen.at : now;
    this.seen.set(name, { record, at });
    const durationMs = (lease.spec.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
    return { live: now - at <= durationMs, recheckMs: durationMs + SHORT_WAIT_MS };
  }
}
