// Failure-domain discovery against a real vcsim with 2 datacenters × 2 clusters,
// 2 datastores and 1 distributed port group per datacenter; DC1's LocalDS_1 is
// moved into a StoragePod (SDRS cluster) DC1_POD first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { discoverInventory } from '../../../controller/backends/vsphere/discovery.js';
import { toFailureDomains, type ClusterInventory } from '../../../controller/backends/vsphere/mapping.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { moRefFields, toMoRef } from '../../../controller/backends/vsphere/client/wire-values.js';
import { vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let client: VsphereClient;

beforeAll(async () => {
  sim = await startVcsim({ datacenters: 2, clusters: 2, hostsPerCluster: 2, datastores: 2, portgroups: 1 });
  client = await vcsimClient(sim);
  const dc1 = (await client.inventory.datacenters()).find((dc) => dc.name === 'DC1');
  const ds = (await client.inventory.datastores(dc1?.ref ?? client.session.serviceContent.rootFolder)).find((d) => d.name === 'LocalDS_1');
  if (dc1 === undefined || ds === undefined) throw new Error('vcsim has no DC1/LocalDS_1');
  const created = (await client.session.invoke('CreateStoragePod', dc1.datastoreFolder, { name: 'DC1_POD' })).child('returnval');
  if (created === undefined) throw new Error('CreateStoragePod returned no pod');
  const move = (await client.session.invoke('MoveIntoFolder_Task', toMoRef(created), { list: [moRefFields(ds.ref)] })).child('returnval');
  if (move === undefined) throw new Error('MoveIntoFolder_Task returned no task');
  await client.tasks.wait(toMoRef(move));
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

const provider: Provider = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'VCSim', namespace: 'team-a' },
  spec: {
    providerClassRef: { name: 'vsphere' },
    connection: { endpoint: 'https://vcsim.example.com/sdk', credentialsRef: { name: 'vcsim' } },
    capabilities: {
      storageClasses: [
        { name: 'local', target: { datastore: 'LocalDS_0' } },
        { name: 'sdrs', target: { datastoreCluster: 'DC1_POD' } },
        { name: 'missing', target: { datastore: 'NoSuchDS' } },
      ],
      networkClasses: [
        {
          name: 'dvpg',
          target: { distributedPortGroup: 'DC0_DVPG0' },
          perZone: [{ datacenter: 'DC1', target: { distributedPortGroup: 'DC1_DVPG0' } }],
        },
        { name: 'standard', target: { portGroup: 'VM Network' } },
        { name: 'wrong-kind', target: { portGroup: 'DC0_DVPG0' } },
      ],
      features: ['vtpm'],
    },
    failureDomainNameOverrides: [{ datacenter: 'DC1', cluster: 'DC1_C1', name: 'edge' }],
  },
};

describe('vSphere failure-domain discovery', () => {
  let inventory: ClusterInventory[];

  beforeAll(async () => {
    inventory = await discoverInventory(client);
  });

  it('walks every cluster with its root pool, datastores (with StoragePod) and networks', () => {
    expect(inventory.map((z) => `${z.datacenter}/${z.cluster}`).sort()).toEqual(['DC0/DC0_C0', 'DC0/DC0_C1', 'DC1/DC1_C0', 'DC1/DC1_C1']);
    for (const zone of inventory) {
      expect(zone.resourcePool).toBe('Resources');
      const pod = zone.datacenter === 'DC1' ? { storagePod: 'DC1_POD' } : {};
      expect(zone.datastores).toEqual(expect.arrayContaining([{ name: 'LocalDS_0' }, { name: 'LocalDS_1', ...pod }]));
      expect(zone.datastores).toHaveLength(2);
      expect(zone.networks).toContainEqual({ name: 'VM Network', distributed: false });
      expect(zone.networks).toContainEqual({ name: `${zone.datacenter}_DVPG0`, distributed: true });
      // vcsim does not set config.uplink, so its DVS0-DVUplinks-N port group is listed here (vCenter marks it and it is left out).
    }
  });

  it('maps them to four failure domains with names, labels, raw and class availability', () => {
    const domains = toFailureDomains(provider, inventory);

    const attributes = (datacenter: string, cluster: string) => ({
      availableStorageClasses: datacenter === 'DC1' ? ['local', 'sdrs'] : ['local'],
      availableNetworkClasses: ['dvpg', 'standard'],
      features: ['vtpm'],
      raw: { datacenter, cluster, resourcePool: 'Resources' },
    });
    // Their room is vcsim's of the moment: its shape here, its figures in provider-vsphere.test.ts.
    for (const domain of domains) {
      expect(domain.capacity?.cpus).toBeGreaterThan(0);
      expect(domain.capacity?.memoryMiB).toBeGreaterThan(0);
      expect(domain.capacity?.storage?.map((s) => s.target)).toContain('LocalDS_0');
    }
    expect(domains.map(({ capacity: _room, ...domain }) => domain)).toEqual([
      { name: 'edge', labels: { name: 'edge', datacenter: 'DC1', cluster: 'DC1_C1' }, attributes: attributes('DC1', 'DC1_C1') },
      { name: 'vcsim-dc0-dc0-c0', labels: { name: 'vcsim-dc0-dc0-c0', datacenter: 'DC0', cluster: 'DC0_C0' }, attributes: attributes('DC0', 'DC0_C0') },
      { name: 'vcsim-dc0-dc0-c1', labels: { name: 'vcsim-dc0-dc0-c1', datacenter: 'DC0', cluster: 'DC0_C1' }, attributes: attributes('DC0', 'DC0_C1') },
      { name: 'vcsim-dc1-dc1-c0', labels: { name: 'vcsim-dc1-dc1-c0', datacenter: 'DC1', cluster: 'DC1_C0' }, attributes: attributes('DC1', 'DC1_C0') },
    ]);
  });
});
