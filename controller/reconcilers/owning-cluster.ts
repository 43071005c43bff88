// The CAPI Cluster an infrastructure object belongs to, read by name to honour
// its spec.paused (CAPI's IsPaused: the Cluster's spec.paused or the object's
// paused annotation); clusterctl move pauses the Cluster, not every object.
import { Label } from '../../infra/api/well-known.js';
import { ApiStatusError } from '../runtime/kube-api.js';
import type { ObjectReader } from '../runtime/shared-reads.js';

export interface ClusterMember {
  readonly metadata: {
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly apiVersion: string; readonly kind: string; readonly name: string }[];
  };
}

/** The name of the CAPI Cluster `obj` belongs to (its cluster-name label or its Cluster owner), if any. */
export function owningClusterName(obj: ClusterMember): string | undefined {
  const owner = obj.metadata.ownerReferences?.find((r) => r.kind === 'Cluster' && r.apiVersion.startsWith('cluster.x-k8s.io/'));
  return obj.metadata.labels?.[Label.capiClusterName] ?? owner?.name;
}

/** The Cluster's name when `obj` belongs to a CAPI Cluster whose spec.paused is true; undefined otherwise. */
export async function pausedOwningCluster(api: ObjectReader, obj: ClusterMember): Promise<string | undefined> {
  const name = owningClusterName(obj);
  if (!name) return undefined;
  try {
    const cluster = await api.get<{ spec?: { paused?: boolean } }>({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name, namespace: obj.metadata.namespace ?? '' },
    });
    return cluster.spec?.paused === true ? name : undefined;
  } catch (err) {
    // No such Cluster (yet, or any more), or no Cluster API installed at all.
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
}
