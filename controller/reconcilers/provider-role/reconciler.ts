// Provider (controller side): Ready=False NoProviderRole while no provider role of its class runs,
// judged by the role's Lease (decide.ts). Writes nothing while a role may be serving.
import { backendApi } from '../../../infra/api/backends.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { ConditionType } from '../../../infra/api/conditions.js';
import type { Clock } from '../../runtime/clock.js';
import { findCondition, setCondition } from '../../runtime/conditions.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { Informer } from '../../runtime/informer.js';
import { ApiStatusError } from '../../runtime/kube-api.js';
import type { Lease } from '../../runtime/leader-election.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { decideProviderRole, providerRoleLeaseNames, type LeaseSeen } from './decide.js';

/** A Lease without leaseDurationSeconds: leader election's default. */
const DEFAULT_LEASE_SECONDS = 15;
/** After a write lost to a newer Provider (its Ready written meanwhile): look again once the cache has it. */
const STALE_RETRY_MS = 1000;

export class ProviderRoleReconciler implements Reconciler {
  readonly name = 'provider-role';
  readonly kind = 'Provider';
  /** Per Lease name: its record (spec) as last seen changed, and when, by this process's clock. */
  private readonly seen = new Map<string, { readonly record: string; readonly at: number }>();

  constructor(
    private readonly providers: Informer<Provider>,
    private readonly leases: Informer<Lease>,
    private readonly leaseNamespace: string,
    private readonly ssa: ServerSideApply,
    private readonly clock: Clock,
  ) {}

  /** A Lease added or changed: its holder's renewal is seen now. */
  observe(lease: Lease): void {
    const record = JSON.stringify(lease.spec);
    const name = lease.metadata.name;
    if (this.seen.get(name)?.record !== record) this.seen.set(name, { record, at: this.clock.now().getTime() });
  }

  forget(lease: Lease): void {
    this.seen.delete(lease.metadata.name);
  }

  /** The Providers a Lease may be the role of. */
  providersOf(lease: Lease): Provider[] {
    return this.providers.list().filter((p) => providerRoleLeaseNames(p).includes(lease.metadata.name));
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const provider = this.providers.get(key);
    const backend = provider && backendApi(provider.spec.providerClassRef.name);
    if (!provider || !backend) return done;
    const now = this.clock.now();
    const leases = providerRoleLeaseNames(provider).flatMap((name) => this.leaseSeen(name, now.getTime()));
    const decision = decideProviderRole(provider, backend, { leaseNamespace: this.leaseNamespace, leases });
    if (!decision.ready) return decision.recheckAfterMs === undefined ? done : waiting(decision.recheckAfterMs);
    const current = findCondition(provider.status?.conditions, ConditionType.Ready);
    const { status, reason, message } = decision.ready;
    if (current?.status === status && current.reason === reason && current.message === message) return done;
    const ready = setCondition(current ? [current] : [], decision.ready, now);
    log.info({ reason, backend: backend.name }, 'No provider role serves the Provider');
    try {
      // The resourceVersion read is a precondition: a Ready a role wrote meanwhile is never overwritten.
      await this.ssa.apply(
        {
          apiVersion: provider.apiVersion,
          kind: provider.kind,
          metadata: {
            name: provider.metadata.name ?? '',
            namespace: provider.metadata.namespace ?? '',
            resourceVersion: provider.metadata.resourceVersion ?? '',
          },
          status: { conditions: ready },
        },
        { subresource: 'status' },
      );
    } catch (err) {
      if (err instanceof ApiStatusError && err.code === 409) return waiting(STALE_RETRY_MS);
      throw err;
    }
    return done;
  }

  private leaseSeen(name: string, now: number): LeaseSeen[] {
    const lease = this.leases.get(`${this.leaseNamespace}/${name}`);
    if (!lease) return [];
    const since = this.seen.get(name)?.at ?? now;
    return [
      {
        name,
        holder: lease.spec.holderIdentity ?? undefined,
        durationMs: (lease.spec.leaseDurationSeconds ?? DEFAULT_LEASE_SECONDS) * 1000,
        unchangedForMs: now - since,
      },
    ];
  }
}
