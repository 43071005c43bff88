// The vSphere inventory walk behind Provider failure domains (upstream-backends
// §1.2): for each datacenter, each cluster with the datastores (and their SDRS
// StoragePod) and the networks it reaches, and its root resource pool.
// A handful of PropertyCollector calls per datacenter, not one per object.
import { refKey } from './client/wire-values.js';
import type { VsphereClient } from './client/vsphere-client.js';
import type { ClusterInventory } from './mapping.js';

export async function discoverInventory(client: VsphereClient): Promise<ClusterInventory[]> {
  const result: ClusterInventory[] = [];
  for (const dc of await client.inventory.datacenters()) {
    const clusters = await client.inventory.clusters(dc.ref);
    if (clusters.length === 0) continue;
    const datastores = await client.inventory.datastores(dc.ref);
    const networks = await client.inventory.networks(dc.ref);
    // StoragePod and root resource pool names, in one call.
    const names = await client.inventory.names([
      ...datastores.flatMap((ds) => (ds.parent?.type === 'StoragePod' ? [ds.parent] : [])),
      ...clusters.map((c) => c.resourcePool),
    ]);
    const datastoreByRef = new Map(datastores.map((ds) => [refKey(ds.ref), ds]));
    const networkByRef = new Map(networks.map((n) => [refKey(n.ref), n]));

    for (const cluster of clusters) {
      const zone: ClusterInventory = {
        datacenter: dc.name,
        cluster: cluster.name,
        datastores: cluster.datastores.flatMap((ref) => {
          const ds = datastoreByRef.get(refKey(ref));
          if (ds === undefined) return [];
          const storagePod = ds.parent?.type === 'StoragePod' ? names.get(refKey(ds.parent)) : undefined;
          return [storagePod === undefined ? { name: ds.name } : { name: ds.name, storagePod }];
        }),
        networks: cluster.networks.flatMap((ref) => {
          const n = networkByRef.get(refKey(ref));
          // Uplink port groups connect hosts, not VMs: no class can target them.
          if (n === undefined || (n.kind === 'distributed' && n.uplink)) return [];
          return [{ name: n.name, distributed: n.kind === 'distributed' }];
        }),
      };
      const pool = names.get(refKey(cluster.resourcePool));
      if (pool !== undefined) zone.resourcePool = pool;
      result.push(zone);
    }
  }
  return result;
}
