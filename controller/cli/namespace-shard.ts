// A controller shard (`banlieue controller --namespace-selector`, ADR 33): it serves the
// namespaced objects of the namespaces its selector matches and whose claim it holds (a Lease
// per namespace, NamespaceClaims), so that two shards never act on one namespace's objects,
// even while a relabelled namespace moves from one to the other. Its reconcilers leave every
// other namespace's keys alone, decided on every pass; each pass counts against its namespace
// until it ends, and the shard lets go of a namespace only when none runs.
import { NamespaceClaims, claimedNamespace } from '../reconcilers/namespace-shard/claims.js';
import { selects, type ShardScope } from '../reconcilers/shard-claim/decide.js';
import { ShardClaimReconciler } from '../reconcilers/shard-claim/reconciler.js';
import { ShardWork } from '../reconcilers/shard-claim/shard-work.js';
import { systemClock } from '../runtime/clock.js';
import { Controller, type ControllerOptions, type Reconciler } from '../runtime/controller.js';
import { done } from '../runtime/errors.js';
import type { EventRecorder } from '../runtime/events.js';
import { keyOf, type Informer, type KubeObject } from '../runtime/informer.js';
import type { Lease } from '../runtime/leader-election.js';
import type { RoleContext } from '../runtime/role-runner.js';

export interface NamespaceShardProps {
  readonly scope: ShardScope;
  readonly namespaces: Informer<KubeObject>;
  /** The Leases of the shards' Lease namespace: the shards' own and the namespaces' claims. */
  readonly leases: Informer<Lease>;
  readonly leaseNamespace: string;
  readonly events: EventRecorder;
  readonly controllerOptions: ControllerOptions;
}

export class NamespaceShard {
  /** The controller of the shard's claims, keyed by namespace. */
  readonly claims: Controller;
  private readonly records: NamespaceClaims;
  private readonly work = new ShardWork();

  constructor(
    { api, metrics, log }: RoleContext,
    private readonly props: NamespaceShardProps,
  ) {
    this.records = new NamespaceClaims(props.namespaces, props.leases, props.leaseNamespace, api);
    const reconciler = new ShardClaimReconciler({
      name: 'namespace-shard',
      role: 'controller shard',
      scope: props.scope,
      records: this.records,
      api,
      events: props.events,
      leaseNamespace: props.leaseNamespace,
      work: this.work,
      clock: systemClock,
    });
    this.claims = new Controller(reconciler, metrics, log, props.controllerOptions);
  }

  /** Whether the shard serves a namespace now: its selector matches the labels and it holds the claim (both from the caches). */
  serves(namespace: string): boolean {
    const object = this.props.namespaces.get(namespace);
    return object !== undefined && selects(this.props.scope, object) && this.records.holderOf(namespace) === this.props.scope.shard;
  }

  /**
   * A reconciler of the shard: a key of a namespace it does not serve (`ns/...`) is left to that
   * namespace's shard; a cluster-scoped key (no namespace) runs. The check and the count start
   * together, with no await between, so a release is never decided while a pass starts.
   */
  scoped(inner: Reconciler): Reconciler {
    return {
      name: inner.name,
      kind: inner.kind,
      reconcile: async (key, log, signal) => {
        const slash = key.indexOf('/');
        if (slash < 0) return inner.reconcile(key, log, signal);
        const namespace = key.slice(0, slash);
        return this.serves(namespace) ? this.work.run(namespace, () => inner.reconcile(key, log, signal)) : done;
      },
    };
  }

  /**
   * Wakes the claims as labels and claims change, and calls `take` with a namespace the shard
   * comes to serve (its claim written, or its labels matching again while it still held it), so
   * that its objects run at once, as after a restart.
   */
  route(take: (namespace: string) => void): void {
    const { namespaces, leases, scope } = this.props;
    namespaces
      .on('add', (ns) => this.claims.enqueue(keyOf(ns)))
      .on('update', (ns, old) => {
        if (old && selects(scope, ns) === selects(scope, old)) return;
        this.claims.enqueue(keyOf(ns));
        if (this.serves(keyOf(ns))) take(keyOf(ns));
      });
    const onClaim = (lease: Lease, old?: Lease): void => {
      const namespace = claimedNamespace(lease);
      if (namespace === undefined) return;
      this.claims.enqueue(namespace);
      const taken = lease.spec.holderIdentity === scope.shard && old?.spec.holderIdentity !== scope.shard;
      if (taken && this.serves(namespace)) take(namespace);
    };
    leases
      .on('add', (l) => onClaim(l))
      .on('update', (l, old) => onClaim(l, old))
      .on('delete', (l) => onClaim({ ...l, spec: {} }));
  }

  /** Looks at every namespace's claim again now and then: a claimant whose Lease lapsed wakes nothing. */
  startResync(signal: AbortSignal): void {
    this.claims.startResync(() => this.props.namespaces.list().map(keyOf), signal);
  }
}
