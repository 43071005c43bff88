// Inventory discovery against a real vcsim with 2 datacenters × 2 clusters ×
// 2 hosts, 2 datastores and 1 distributed port group per datacenter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatacenterInfo } from '../../../controller/backends/vsphere/client/inventory.js';
import { PropertyCollector } from '../../../controller/backends/vsphere/client/property-collector.js';
import type { VimInvoker } from '../../../controller/backends/vsphere/client/session.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { moRefFields, toMoRef } from '../../../controller/backends/vsphere/client/wire-values.js';
import { vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let client: VsphereClient;
let dc1: DatacenterInfo;

beforeAll(async () => {
  sim = await startVcsim({ datacenters: 2, clusters: 2, hostsPerCluster: 2, datastores: 2, portgroups: 1 });
  client = await vcsimClient(sim);
  const found = (await client.inventory.datacenters()).find((dc) => dc.name === 'DC1');
  if (found === undefined) throw new Error('vcsim has no DC1');
  dc1 = found;
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

describe('vSphere inventory', () => {
  it('lists every datacenter with its folders', async () => {
    const datacenters = await client.inventory.datacenters();

    expect(datacenters.map((dc) => dc.name).sort()).toEqual(['DC0', 'DC1']);
    for (const dc of datacenters) {
      expect(dc.vmFolder.type).toBe('Folder');
      expect(dc.hostFolder.type).toBe('Folder');
    }
  });

  it("lists a datacenter's clusters with their root pool, datastores and networks", async () => {
    const clusters = await client.inventory.clusters(dc1.ref);

    expect(clusters.map((c) => c.name).sort()).toEqual(['DC1_C0', 'DC1_C1']);
    for (const cluster of clusters) {
      expect(cluster.resourcePool.type).toBe('ResourcePool');
      expect(cluster.datastores).toHaveLength(2);
      expect(cluster.networks.map((n) => n.type)).toContain('DistributedVirtualPortgroup');
    }
  });

  it("lists a datacenter's datastores with capacity and free space", async () => {
    const datastores = await client.inventory.datastores(dc1.ref);

    expect(datastores.map((d) => d.name).sort()).toEqual(['LocalDS_0', 'LocalDS_1']);
    for (const ds of datastores) {
      expect(ds.accessible).toBe(true);
      expect(ds.capacity).toBeGreaterThan(0);
      expect(ds.freeSpace).toBeLessThanOrEqual(ds.capacity);
      expect(ds.parent?.type).toBe('Folder');
    }
  });

  it('lists standard and distributed networks with the port group key and switch UUID a NIC backing needs', async () => {
    const networks = await client.inventory.networks(dc1.ref);

    expect(networks).toContainEqual(expect.objectContaining({ kind: 'standard', name: 'VM Network' }));
    const portgroup = networks.find((n) => n.name === 'DC1_DVPG0');
    expect(portgroup).toMatchObject({ kind: 'distributed', portgroupKey: portgroup?.ref.value });
    expect(portgroup?.kind === 'distributed' && portgroup.switchUuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('follows ContinueRetrievePropertiesEx over every page', async () => {
    const hosts = [{ type: 'HostSystem', pathSet: ['name'] }];
    const root = client.session.serviceContent.rootFolder;
    const methods: string[] = [];
    // The real session, with the methods it is asked to call written down.
    const recording: VimInvoker = {
      serviceContent: client.session.serviceContent,
      invoke: (method, self, args) => {
        methods.push(method);
        return client.session.invoke(method, self, args);
      },
    };

    const all = await client.properties.listManagedObjects(root, hosts);
    const paged = await new PropertyCollector(recording).listManagedObjects(root, hosts, { maxObjects: 3 });

    expect(all).toHaveLength(8);
    expect(paged.map((o) => o.obj.value).sort()).toEqual(all.map((o) => o.obj.value).sort());
    expect(methods.filter((m) => m === 'ContinueRetrievePropertiesEx')).toHaveLength(2);
  });

  it('finds an entity by inventory path and answers undefined for a path that does not exist', async () => {
    expect(await client.search.findByInventoryPath('DC1/host/DC1_C1')).toMatchObject({ type: 'ClusterComputeResource' });
    expect(await client.search.findByInventoryPath('DC1/host/nope')).toBeUndefined();
  });

  it('reads an object that does not exist as NotFound with fault ManagedObjectNotFound', async () => {
    await expect(client.properties.retrieveOne({ type: 'VirtualMachine', value: 'vm-404' }, ['name'])).rejects.toMatchObject({
      kind: 'NotFound',
      faultType: 'ManagedObjectNotFound',
    });
  });
});

describe('vSphere inventory paths', () => {
  it('gives the path FindByInventoryPath takes, through folders, with "/" and "%" in names escaped as the server keeps them', async () => {
    // A folder whose name holds two characters vCenter escapes in names (%2f, %25).
    const created = await client.session.invoke('CreateFolder', dc1.vmFolder, { name: 'images/50%' });
    const folder = toMoRef(created.child('returnval') ?? created);
    const [vm] = await client.vms.names(dc1.vmFolder);
    if (!vm) throw new Error('DC1 has no VM');
    const task = (await client.session.invoke('MoveIntoFolder_Task', folder, { list: [moRefFields(vm.ref)] })).child('returnval');
    if (task) await client.tasks.wait(toMoRef(task));

    const path = await client.inventory.inventoryPath(vm.ref);

    expect(path).toBe(`DC1/vm/images%2f50%25/${vm.name}`);
    expect(await client.search.findByInventoryPath(path)).toEqual(vm.ref);
  });
});
