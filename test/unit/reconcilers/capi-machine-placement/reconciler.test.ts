// The placement pass against caches that lag its own writes, as a worker's
// cache does when the next event of a machine comes before the watch shows the
// failure domain just written. (Against a real API server the lag is too short
// to hold still for a test.)
import { describe, expect, it } from 'vitest';
import type { InfraCluster } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { CapiMachinePlacementReconciler } from '../../../../controller/reconcilers/capi-machine-placement/reconciler.js';
import type { Informer } from '../../../../controller/runtime/informer.js';
import type { KubeApi, ObjectRef } from '../../../../controller/runtime/kube-api.js';
import { silentLogger } from '../../../../controller/runtime/log.js';
import type { ServerSideApply } from '../../../../controller/runtime/server-side-apply.js';

const CAPI = 'cluster.x-k8s.io/v1beta2';

function machine(uid: string): InfraMachine {
  return {
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'FakeMachine',
    metadata: {
      name: 'm',
      namespace: 'ns',
      uid,
      labels: { 'cluster.x-k8s.io/cluster-name': 'work' },
      ownerReferences: [{ apiVersion: CAPI, kind: 'Machine', name: 'm', uid: 'machine-uid', controller: true }],
    },
    spec: { image: 'debian-13', cpus: 1, memoryMiB: 512 },
  } as InfraMachine;
}

const cluster = {
  metadata: { name: 'work', namespace: 'ns', ownerReferences: [{ apiVersion: CAPI, kind: 'Cluster', name: 'work', uid: 'c' }] },
  status: { failureDomains: [{ name: 'zone-a' }, { name: 'zone-b' }] },
} as unknown as InfraCluster;

/** A cache that keeps showing what it was given, whatever is written. */
function staleCache<T extends { metadata: { namespace?: string } }>(objects: () => T[]): Informer<T> {
  return {
    get: (key: string) => objects().find((o) => `${o.metadata.namespace}/${(o.metadata as { name?: string }).name}` === key),
    list: () => objects(),
  } as unknown as Informer<T>;
}

/** The reconciler over `cached`; its applies (after `failing` refused ones) in `applied`. */
function placementPass(cached: () => InfraMachine[], failing = 0): { reconciler: CapiMachinePlacementReconciler; applied: ObjectRef[] } {
  const applied: ObjectRef[] = [];
  let refusals = failing;
  const owning = {
    metadata: { uid: 'machine-uid' },
    spec: { infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: 'FakeMachine', name: 'm' } },
  };
  const api = { get: () => Promise.resolve(owning) } as unknown as KubeApi;
  const apply = (o: ObjectRef): Promise<ObjectRef> => {
    if (refusals-- > 0) return Promise.reject(new Error('connection reset'));
    applied.push(o);
    return Promise.resolve(o);
  };
  const ssa = { apply } as unknown as ServerSideApply;
  const reconciler = new CapiMachinePlacementReconciler(
    'FakeMachine',
    staleCache(cached),
    staleCache(() => [cluster]),
    api,
    ssa,
  );
  return { reconciler, applied };
}

describe('CAPI machine placement over a cache that lags its writes', () => {
  it('writes a failure domain once, however many events come before the cache shows it', async () => {
    const { reconciler, applied } = placementPass(() => [machine('uid-1')]);
    for (let i = 0; i < 3; i++) await reconciler.reconcile('ns/m', silentLogger());
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ spec: { failureDomain: 'zone-a' } });
  });

  it('places a machine made again under the same name', async () => {
    let cached = [machine('uid-1')];
    const { reconciler, applied } = placementPass(() => cached);
    await reconciler.reconcile('ns/m', silentLogger());
    cached = [machine('uid-2')];
    await reconciler.reconcile('ns/m', silentLogger());
    expect(applied.map((o) => (o.metadata as { uid?: string }).uid)).toEqual(['uid-1', 'uid-2']);
  });

  it('tries again when its write failed', async () => {
    const { reconciler, applied } = placementPass(() => [machine('uid-1')], 1);
    await expect(reconciler.reconcile('ns/m', silentLogger())).rejects.toThrow('connection reset');
    await reconciler.reconcile('ns/m', silentLogger());
    expect(applied).toHaveLength(1);
  });
});
