// VM lifecycle against a real vcsim: template, clone with identity and sizing,
// power, reconfigure, shutdown, destroy, and the faults each step can raise.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterInfo, DatacenterInfo, DatastoreInfo, NetworkInfo } from '../../../controller/backends/vsphere/client/inventory.js';
import type { ManagedObjectReference } from '../../../controller/backends/vsphere/client/vim-types.js';
import type { VmConfigSpec } from '../../../controller/backends/vsphere/client/vm-specs.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { toMoRef, toMoRefs } from '../../../controller/backends/vsphere/client/wire-values.js';
import { waitFor } from '../../support/wait.js';
import { makeTemplate, vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let client: VsphereClient;
let dc: DatacenterInfo;
let cluster: ClusterInfo;
let datastore: DatastoreInfo;
let vmNetwork: NetworkInfo;
let portgroup: NetworkInfo;
let template: ManagedObjectReference;
let clones = 0;

beforeAll(async () => {
  sim = await startVcsim({
    datacenters: 1,
    clusters: 1,
    hostsPerCluster: 2,
    datastores: 2,
    portgroups: 1,
    vmsPerPool: 1,
    // vcsim names the task body "Suspend" (the method is SuspendVM_Task); only the task-deadline test suspends.
    methodDelayMs: { Suspend: 3_000 },
  });
  client = await vcsimClient(sim);
  dc = one(await client.inventory.datacenters(), 'DC0');
  cluster = one(await client.inventory.clusters(dc.ref), 'DC0_C0');
  datastore = one(await client.inventory.datastores(dc.ref), 'LocalDS_1');
  const networks = await client.inventory.networks(dc.ref);
  vmNetwork = one(networks, 'VM Network');
  portgroup = one(networks, 'DC0_DVPG0');
  template = await makeTemplate(client, 'banlieue-template');
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

describe('vSphere templates', () => {
  it('refuses to mark a powered-on VM as a template, as Rejected with InvalidPowerState', async () => {
    const running = await vmAt('DC0/vm/DC0_C0_RP0_VM0');

    await expect(client.vms.markAsTemplate(running)).rejects.toMatchObject({ kind: 'Rejected', faultType: 'InvalidPowerState' });
  });

  it('makes a template from a powered-off clone of a VM', async () => {
    const summary = await client.vms.summary(template);

    expect(summary).toMatchObject({ name: 'banlieue-template', template: true, powerState: 'poweredOff' });
  });

  it('tells a template from a VM that is not one, and from an object that is no VM', async () => {
    expect(await client.vms.isTemplate(template)).toBe(true);
    expect(await client.vms.isTemplate(await vmAt('DC0/vm/DC0_C0_RP0_VM0'))).toBe(false);
    expect(await client.vms.isTemplate(dc.vmFolder)).toBe(false);
  });
});

describe('vSphere VM cloning', () => {
  it('clones a template with the BIOS UUID, sizing, extraConfig, datastore and port group asked for, and finds it by that UUID', async () => {
    const uuid = '6b1e4a4c-54c4-5a4e-9a8e-0d4c1b2a3f01';
    const [card] = await client.vms.ethernetCards(template);
    if (card === undefined) throw new Error('the template has no NIC');

    const vm = await client.vms.clone(template, dc.vmFolder, 'clone-identity', {
      location: { pool: cluster.resourcePool, datastore: datastore.ref, folder: dc.vmFolder },
      config: {
        uuid,
        numCPUs: 2,
        memoryMB: 2048,
        extraConfig: { 'guestinfo.banlieue.phase': 'created' },
        nicEdits: [{ card, target: { kind: 'network', network: vmNetwork.ref, deviceName: vmNetwork.name } }],
      },
    });

    expect(await client.search.findVmByBiosUuid(uuid)).toEqual(vm);
    expect(await client.vms.summary(vm)).toMatchObject({ name: 'clone-identity', uuid, template: false, powerState: 'poweredOff' });
    expect(await hardware(vm)).toMatchObject({ numCPU: 2, memoryMB: 2048, extraConfig: { 'guestinfo.banlieue.phase': 'created' } });
    expect((await hardware(vm)).datastores).toEqual([datastore.ref]);
    const [nic] = await client.vms.ethernetCards(vm);
    expect(nic).toMatchObject({ key: card.key, deviceType: card.deviceType, backing: { kind: 'network', deviceName: 'VM Network', network: vmNetwork.ref } });
  });

  it('keeps names and extraConfig values with XML metacharacters intact through the wire', async () => {
    const name = `it's <"quoted"> & escaped`;
    const value = '</value><injected>&amp;';

    const vm = await cloneFromTemplate({ extraConfig: { 'guestinfo.banlieue.note': value } }, name);

    expect((await client.vms.summary(vm)).name).toBe(name);
    expect((await hardware(vm)).extraConfig['guestinfo.banlieue.note']).toBe(value);
  });

  it('answers undefined when no VM has the BIOS UUID', async () => {
    expect(await client.search.findVmByBiosUuid('00000000-0000-0000-0000-00000000dead')).toBeUndefined();
  });

  it('fails a clone onto a name already in the folder as TaskFailed with DuplicateName', async () => {
    await cloneFromTemplate({}, 'clone-duplicate');

    await expect(cloneFromTemplate({}, 'clone-duplicate')).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'DuplicateName' });
  });

  it('fails a clone of a template without a resource pool as TaskFailed with InvalidArgument', async () => {
    // vcsim checks spec.location.pool inside the task, as vCenter's clone task does.
    await expect(client.vms.clone(template, dc.vmFolder, 'clone-no-pool', { location: { datastore: datastore.ref } })).rejects.toMatchObject({
      kind: 'TaskFailed',
      faultType: 'InvalidArgument',
    });
  });
});

describe('vSphere VM power and configuration', () => {
  it('powers a VM on and off; powering off a powered-off VM fails its task with InvalidPowerState', async () => {
    const vm = await cloneFromTemplate();

    await client.vms.powerOn(vm);
    expect((await client.vms.summary(vm)).powerState).toBe('poweredOn');
    await client.vms.powerOff(vm);
    expect((await client.vms.summary(vm)).powerState).toBe('poweredOff');

    await expect(client.vms.powerOff(vm)).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'InvalidPowerState' });
  });

  it('reconfigures CPU, memory, extraConfig and moves the NIC to a distributed port group', async () => {
    const vm = await cloneFromTemplate({ numCPUs: 1, memoryMB: 1024 });
    const [card] = await client.vms.ethernetCards(vm);
    if (card === undefined || portgroup.kind !== 'distributed') throw new Error('no NIC or no distributed port group');

    await client.vms.reconfigure(vm, {
      numCPUs: 4,
      memoryMB: 4096,
      extraConfig: new Map([['guestinfo.banlieue.phase', 'installed']]),
      nicEdits: [{ card, target: { kind: 'distributed', switchUuid: portgroup.switchUuid, portgroupKey: portgroup.portgroupKey } }],
    });

    expect(await hardware(vm)).toMatchObject({ numCPU: 4, memoryMB: 4096, extraConfig: { 'guestinfo.banlieue.phase': 'installed' } });
    const [nic] = await client.vms.ethernetCards(vm);
    expect(nic?.backing).toEqual({ kind: 'distributed', switchUuid: portgroup.switchUuid, portgroupKey: portgroup.portgroupKey });
  });

  it('reports an IP set through extraConfig SET.guest.ipAddress as the guest IP (a vcsim hook)', async () => {
    // vcsim invents no guest IPs; this hook is how peer tests give a VM one.
    const vm = await cloneFromTemplate();

    await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.42' } });

    expect((await client.vms.summary(vm)).ipAddress).toBe('10.0.0.42');
  });

  it('shuts the guest down until the VM is powered off', async () => {
    const vm = await cloneFromTemplate();
    await client.vms.powerOn(vm);

    await client.vms.shutdownGuest(vm);

    await waitFor('the guest to power off', async () => (await client.vms.summary(vm)).powerState === 'poweredOff', 10_000);
  });
});

describe('vSphere tasks', () => {
  it('stops waiting at the deadline with Unreachable TaskDeadlineExceeded while the task goes on', async () => {
    const vm = await cloneFromTemplate();
    await client.vms.powerOn(vm);
    const suspend = toMoRef(required((await client.session.invoke('SuspendVM_Task', vm)).child('returnval')));

    await expect(client.tasks.wait(suspend, { timeoutMs: 500 })).rejects.toMatchObject({ kind: 'Unreachable', code: 'TaskDeadlineExceeded' });

    await client.tasks.wait(suspend);
    expect((await client.vms.summary(vm)).powerState).toBe('suspended');
  });
});

describe('vSphere VM deletion', () => {
  it('destroys a VM so that FindByUuid no longer finds it; destroying it again is NotFound', async () => {
    const uuid = '6b1e4a4c-54c4-5a4e-9a8e-0d4c1b2a3f02';
    const vm = await cloneFromTemplate({ uuid });

    await client.vms.destroy(vm);

    expect(await client.search.findVmByBiosUuid(uuid)).toBeUndefined();
    await expect(client.vms.destroy(vm)).rejects.toMatchObject({ kind: 'NotFound', faultType: 'ManagedObjectNotFound' });
    await expect(client.vms.summary(vm)).rejects.toMatchObject({ kind: 'NotFound' });
  });

  it('fails to destroy a powered-on VM as TaskFailed with InvalidPowerState', async () => {
    const vm = await cloneFromTemplate();
    await client.vms.powerOn(vm);

    await expect(client.vms.destroy(vm)).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'InvalidPowerState' });
  });
});

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing from the response');
  return value;
}

function one<T extends { readonly name: string }>(items: readonly T[], name: string): T {
  const found = items.find((item) => item.name === name);
  if (found === undefined) throw new Error(`vcsim has no ${name} (has ${items.map((i) => i.name).join(', ')})`);
  return found;
}

async function vmAt(path: string): Promise<ManagedObjectReference> {
  const ref = await client.search.findByInventoryPath(path);
  if (ref === undefined) throw new Error(`vcsim has no ${path}`);
  return ref;
}

function cloneFromTemplate(config: VmConfigSpec = {}, name = `clone-${++clones}`): Promise<ManagedObjectReference> {
  return client.vms.clone(template, dc.vmFolder, name, { location: { pool: cluster.resourcePool, datastore: datastore.ref }, config });
}

/** Sizing, extraConfig and datastores as the server reports them. */
async function hardware(
  vm: ManagedObjectReference,
): Promise<{ numCPU: number; memoryMB: number; extraConfig: Record<string, string>; datastores: ManagedObjectReference[] }> {
  const content = await client.properties.retrieveOne(vm, ['config.hardware.numCPU', 'config.hardware.memoryMB', 'config.extraConfig', 'datastore']);
  const extraConfig: Record<string, string> = {};
  for (const option of content.props.get('config.extraConfig')?.childrenNamed('OptionValue') ?? []) {
    extraConfig[option.childText('key') ?? ''] = option.childText('value') ?? '';
  }
  return {
    numCPU: Number(content.props.get('config.hardware.numCPU')?.text),
    memoryMB: Number(content.props.get('config.hardware.memoryMB')?.text),
    extraConfig,
    datastores: toMoRefs(content.props.get('datastore')),
  };
}
