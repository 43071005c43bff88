// A role shard's claims (ADR 33): one shard at a time serves a claimed object (a provider shard a
// Provider and its machines, a controller shard a namespace and its objects). A shard claims an
// object its selector matches once no live shard holds it, and lets go of one it no longer
// matches once its own passes on it are over (decideShardClaim). Both are writes preconditioned
// on the resourceVersion read (ClaimRecords): of two shards claiming at once, one wins.
import { Reason } from '../../../infra/api/conditions.js';
import { decideShardClaim, selects, type ShardScope } from './decide.js';
import type { ShardWork } from './shard-work.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { KubeObject } from '../../runtime/informer.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import { formatSelector } from '../../scheduler/label-selector.js';

/** Where the claims on one kind of object are kept, read from the shard's cache and written with a precondition. */
export interface ClaimRecords<T extends KubeObject> {
  /** The claimed kind, as Events name it. */
  readonly apiVersion: string;
  readonly kind: string;
  /** The object of a key, from the shard's cache. */
  get(key: string): T | undefined;
  /** The shard holding its claim, if any. */
  holder(object: T): string | undefined;
  /** The claim set to `shard` (null: released) if it is still as read; false when it was not (or the object is gone). */
  write(object: T, shard: string | null): Promise<boolean>;
}

export interface ShardClaimOptions<T extends KubeObject> {
  /** The reconciler's name in metrics and logs. */
  readonly name: string;
  /** What the shards are, as Events say it: `provider shard`, `controller shard`. */
  readonly role: string;
  readonly scope: ShardScope;
  readonly records: ClaimRecords<T>;
  readonly api: KubeApi;
  readonly events: EventRecorder;
  /** The namespace of the shards' Leases (the role's --leader-election-namespace). */
  readonly leaseNamespace: string;
  readonly work: ShardWork;
  readonly clock: Clock;
}

/** What a shard reads of another's Lease (coordination.k8s.io/v1). */
interface LeaseRecord {
  readonly spec: { readonly holderIdentity?: string | null; readonly leaseDurationSeconds?: number; readonly renewTime?: string | null };
}

/** A Lease without leaseDurationSeconds: leader election's default. */
const DEFAULT_LEASE_SECONDS = 15;
/** While our own passes on an object we let go of run, or after a claim lost to a newer record: look again this soon. */
const SHORT_WAIT_MS = 1000;

/** Claims are written with the resourceVersion read: a conflict or a gone object means another write came first. */
export function isLostClaimWrite(err: unknown): boolean {
  return err instanceof ApiStatusError && (err.code === 409 || err.code === 404);
}

export class ShardClaimReconciler<T extends KubeObject> implements Reconciler {
  readonly name: string;
  readonly kind: string;
  /** Per claimant Lease: its record as last seen changed, and when, by this process's clock (as leader election judges expiry). */
  private readonly seen = new Map<string, { readonly record: string; readonly at: number }>();

  constructor(private readonly o: ShardClaimOptions<T>) {
    this.name = o.name;
    this.kind = o.records.kind;
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const { scope, records, work } = this.o;
    const object = records.get(key);
    if (!object) return done;
    const claimedBy = records.holder(object);
    const selected = selects(scope, object);
    const other = selected && claimedBy !== undefined && claimedBy !== scope.shard;
    const claimant = other ? await this.claimantLease(claimedBy) : undefined;
    const decision = decideShardClaim(scope.shard, { selected, claimedBy, claimantLive: claimant?.live ?? false, busy: work.busy(key) });
    const { role } = this.o;
    const { kind } = records;
    switch (decision) {
      case 'none':
        return done;
      case 'wait':
        // A live claimant lets go by a write, which wakes us; its Lease expiring does not.
        return waiting(claimant ? claimant.recheckMs : SHORT_WAIT_MS);
      case 'claim':
        log.info({ shard: scope.shard, from: claimedBy }, `Claiming the ${kind} for this shard`);
        if (!(await records.write(object, scope.shard))) return waiting(SHORT_WAIT_MS);
        void this.record(
          object,
          Reason.ShardClaimed,
          `Served by ${role} ${scope.shard} (selector ${formatSelector(scope.selector)})${claimedBy ? `, taken over from ${claimedBy}, whose Lease is not renewed` : ''}`,
        );
        return done;
      case 'release':
        log.info({ shard: scope.shard }, `Releasing the ${kind}: the shard selector no longer matches its labels`);
        if (!(await records.write(object, null))) return waiting(SHORT_WAIT_MS);
        void this.record(
          object,
          Reason.ShardReleased,
          `Released by ${role} ${scope.shard}: its selector ${formatSelector(scope.selector)} no longer matches the ${kind}'s labels`,
        );
        return done;
    }
  }

  private record(object: T, reason: string, message: string): Promise<void> {
    const { apiVersion, kind } = this.o.records;
    return this.o.events.record({ apiVersion, kind, metadata: object.metadata }, 'Normal', reason, message);
  }

  /** Whether the claimant's Lease is held and was renewed within its duration, and when to look again. */
  private async claimantLease(name: string): Promise<{ live: boolean; recheckMs: number }> {
    let lease: LeaseRecord | undefined;
    try {
      lease = await this.o.api.request<LeaseRecord>('GET', `/apis/coordination.k8s.io/v1/namespaces/${this.o.leaseNamespace}/leases/${name}`);
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    }
    if (!lease?.spec.holderIdentity) return { live: false, recheckMs: SHORT_WAIT_MS };
    const now = this.o.clock.now().getTime();
    const record = JSON.stringify(lease.spec);
    const seen = this.seen.get(name);
    const at = seen?.record === record ? seen.at : now;
    this.seen.set(name, { record, at });
    const durationMs = (lease.spec.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000;
    return { live: now - at <= durationMs, recheckMs: durationMs + SHORT_WAIT_MS };
  }
}
