// Where a controller shard's claim on a namespace is kept (ADR 33): a Lease per namespace in the
// shards' Lease namespace, `banlieue-controller-namespace-<namespace>`, whose holderIdentity is the
// shard's Lease name. The controller may write Leases there already (its own leader election) and
// must not write Namespaces. The record is owned by its Namespace, so it goes with it. It is
// created, or merge-patched with the resourceVersion read: of two shards claiming at once, one wins.
// It is never renewed: whether its holder still runs is judged by the holder's own Lease.
import { boundedName, OBJECT_NAME_MAX } from '../../../infra/api/bounded-name.js';
import { Label } from '../../../infra/api/well-known.js';
import type { Informer, KubeObject } from '../../runtime/informer.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import type { Lease } from '../../runtime/leader-election.js';
import { labelValue } from '../../scheduler/label-selector.js';
import { isLostClaimWrite, type ClaimRecords } from '../shard-claim/reconciler.js';

const LEASES = 'coordination.k8s.io/v1';

/** The Lease recording which controller shard serves `namespace`. */
export function namespaceClaimLeaseName(namespace: string): string {
  return boundedName(`banlieue-controller-namespace-${namespace}`, OBJECT_NAME_MAX);
}

/** The namespace a Lease records the claim on; undefined for any other Lease. */
export function claimedNamespace(lease: { readonly metadata: { readonly name: string; readonly labels?: Record<string, string> } }): string | undefined {
  return labelValue(lease.metadata.labels, Label.namespaceClaim);
}

export class NamespaceClaims implements ClaimRecords<KubeObject> {
  readonly apiVersion = 'v1';
  readonly kind = 'Namespace';

  constructor(
    private readonly namespaces: Informer<KubeObject>,
    /** The Leases of `leaseNamespace`. */
    private readonly leases: Informer<Lease>,
    private readonly leaseNamespace: string,
    private readonly api: KubeApi,
  ) {}

  get(namespace: string): KubeObject | undefined {
    return this.namespaces.get(namespace);
  }

  holder(namespace: KubeObject): string | undefined {
    return this.holderOf(namespace.metadata.name ?? '');
  }

  /** The shard holding a namespace's claim, by the namespace's name, if any. */
  holderOf(namespace: string): string | undefined {
    return this.record(namespace)?.spec.holderIdentity || undefined;
  }

  async write(namespace: KubeObject, shard: string | null): Promise<boolean> {
    const name = namespace.metadata.name ?? '';
    const record = this.record(name);
    const collection = `/apis/${LEASES}/namespaces/${this.leaseNamespace}/leases`;
    try {
      if (record) {
        const patch = { metadata: { resourceVersion: record.metadata.resourceVersion }, spec: { holderIdentity: shard } };
        await this.api.request('PATCH', `${collection}/${record.metadata.name}`, { body: patch, contentType: 'application/merge-patch+json' });
      } else if (shard !== null) {
        await this.api.request('POST', collection, { body: this.newRecord(namespace, shard) });
      }
      return true;
    } catch (err) {
      // 409 on create: another shard's record came first.
      if (isLostClaimWrite(err)) return false;
      throw err;
    }
  }

  private record(namespace: string): Lease | undefined {
    return this.leases.get(`${this.leaseNamespace}/${namespaceClaimLeaseName(namespace)}`);
  }

  private newRecord(namespace: KubeObject, shard: string): object {
    const name = namespace.metadata.name ?? '';
    return {
      apiVersion: LEASES,
      kind: 'Lease',
      metadata: {
        name: namespaceClaimLeaseName(name),
        namespace: this.leaseNamespace,
        labels: { [Label.namespaceClaim]: name },
        // Garbage-collected with its namespace (a namespaced object may have a cluster-scoped owner).
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name, uid: namespace.metadata.uid }],
      },
      spec: { holderIdentity: shard },
    };
  }
}
