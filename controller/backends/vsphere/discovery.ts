// The vSphere inventory walk behind Provider failure domains (upstream-backends
// §1.2): for each datacenter, each cluster with the datastores (and their SDRS
// StoragePod) and the networks it reaches, and its root resource pool.
// A handful of PropertyCollector calls per datacenter, not one per object.
import type { ObjectContent } from './client/property-collector.js';
import type { ManagedObjectReference } from './client/vim-types.js';
import type { VsphereClient } from './client/vsphere-client.js';
import type { ClusterInventory } from './mapping.js';

export async function discoverInventory(client: VsphereClient): Promise<ClusterInventory[]> {
  const result: ClusterInventory[] = [];
  for (const dc of await client.inventory.datacenters()) {
    const clusters = await client.inventory.clusters(dc.ref);
    if (clusters.length === 0) continue;
    const datastores = await client.inventory.datastores(dc.ref);
    const networks = await client.inventory.networks(dc.ref);
    const podNames = await namesOf(
      client,
      datastores.flatMap((ds) => (ds.parent?.type === 'StoragePod' ? [ds.parent] : [])),
    );
    const poolNames = await namesOf(client, clusters.map((c) => c.resourcePool));
    const datastoreByRef = new Map(datastores.map((ds) => [key(ds.ref), ds]));
    const networkByRef = new Map(networks.map((n) => [key(n.ref), n]));

    for (const cluster of clusters) {
      const zone: ClusterInventory = {
        datacenter: dc.name,
        cluster: cluster.name,
        datastores: cluster.datastores.flatMap((ref) => {
          const ds = datastoreByRef.get(key(ref));
          if (ds === undefined) return [];
          const storagePod = ds.parent?.type === 'StoragePod' ? podNames.get(key(ds.parent)) : undefined;
          return [storagePod === undefined ? { name: ds.name } : { name: ds.name, storagePod }];
        }),
        networks: cluster.networks.flatMap((ref) => {
          const n = networkByRef.get(key(ref));
          // Uplink port groups connect hosts, not VMs: no class can target them.
          if (n === undefined || (n.kind === 'distributed' && n.uplink)) return [];
          return [{ name: n.name, distributed: n.kind === 'distributed' }];
        }),
      };
      const pool = poolNames.get(key(cluster.resourcePool));
      if (pool !== undefined) zone.resourcePool = pool;
      result.push(zone);
    }
  }
  return result;
}

/** `name` of each object, by `type:value`, in one RetrievePropertiesEx. */
async function namesOf(client: VsphereClient, refs: readonly ManagedObjectReference[]): Promise<Map<string, string>> {
  const unique = new Map(refs.map((r) => [key(r), r]));
  if (unique.size === 0) return new Map();
  const objects = [...unique.values()];
  const found: ObjectContent[] = await client.properties.retrieve([
    {
      propSet: [...new Set(objects.map((r) => r.type))].map((type) => ({ type, pathSet: ['name'] })),
      objectSet: objects.map((obj) => ({ obj })),
    },
  ]);
  const names = new Map<string, string>();
  for (const c of found) {
    const name = c.props.get('name')?.text;
    if (name !== undefined) names.set(key(c.obj), name);
  }
  return names;
}

function key(ref: ManagedObjectReference): string {
  return `${ref.type}:${ref.value}`;
}
