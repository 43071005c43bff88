// The vSphere inventory walk behind Provider failure domains (upstream-backends
// §1.2): for each datacenter, each cluster with the datastores (and their SDRS
// StoragePod) and the networks it reaches, its root resource pool, and its
// capacity from its hosts' and datastores' summaries.
// A handful of PropertyCollector calls per datacenter, not one per object.
import type { CapacityReading } from '../capacity.js';
import type { DatastoreInfo, HostInfo } from './client/inventory.js';
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
    const hostByRef = new Map((await client.inventory.hosts(dc.ref)).map((h) => [refKey(h.ref), h]));
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
      zone.capacity = clusterCapacity(
        cluster.hosts.flatMap((ref) => hostByRef.get(refKey(ref)) ?? []),
        cluster.datastores.flatMap((ref) => datastoreByRef.get(refKey(ref)) ?? []),
        names,
      );
      const pool = names.get(refKey(cluster.resourcePool));
      if (pool !== undefined) zone.resourcePool = pool;
      result.push(zone);
    }
  }
  return result;
}

/**
 * A cluster's room: the CPU threads of its largest usable host, its usable hosts' memory and
 * what is not in use, each accessible datastore's free space, and each datastore cluster's
 * (StoragePod: its datastores' together), by name as storage class targets give them.
 */
function clusterCapacity(hosts: readonly HostInfo[], datastores: readonly DatastoreInfo[], names: ReadonlyMap<string, string>): CapacityReading {
  const usable = hosts.filter((h) => h.usable);
  const storage = new Map<string, { freeBytes: number; capacityBytes: number }>();
  const add = (target: string, ds: DatastoreInfo): void => {
    const sum = storage.get(target) ?? { freeBytes: 0, capacityBytes: 0 };
    storage.set(target, { freeBytes: sum.freeBytes + ds.freeSpace, capacityBytes: sum.capacityBytes + ds.capacity });
  };
  for (const ds of datastores.filter((d) => d.accessible)) {
    add(ds.name, ds);
    const pod = ds.parent?.type === 'StoragePod' ? names.get(refKey(ds.parent)) : undefined;
    if (pod !== undefined) add(pod, ds);
  }
  return {
    cpus: Math.max(0, ...usable.map((h) => h.cpuThreads)),
    memoryBytes: usable.reduce((sum, h) => sum + h.memoryBytes, 0),
    freeMemoryBytes: usable.reduce((sum, h) => sum + Math.max(0, h.memoryBytes - h.memoryUsedBytes), 0),
    storage: [...storage].map(([target, s]) => ({ target, ...s })),
  };
}
