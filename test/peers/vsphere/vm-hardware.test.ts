// VM hardware against a real vcsim: disks grown and added, NICs re-plugged with
// a manual MAC, added and removed, firmware, extraConfig and suspend, each
// checked through what the client reads back. vcsim applies only uuid, CPU,
// memory, extraConfig and deviceChange of a clone's ConfigSpec (firmware and
// bootOptions only on reconfigure), so firmware is tested by reconfigure here
// and its encoding in test/unit/backends/vsphere/vm-specs.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextFreeUnits } from '../../../controller/backends/vsphere/client/disk-units.js';
import type { DatacenterInfo, DatastoreInfo } from '../../../controller/backends/vsphere/client/inventory.js';
import type { DiskControllerInfo, ManagedObjectReference, VirtualDiskInfo, VmHardware } from '../../../controller/backends/vsphere/client/vim-types.js';
import type { NicTarget, VmConfigSpec } from '../../../controller/backends/vsphere/client/vm-specs.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { makeTemplate, vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

const GiB_IN_KB = 1024 * 1024;

let sim: Vcsim;
let client: VsphereClient;
let dc: DatacenterInfo;
let pool: ManagedObjectReference;
let datastore: DatastoreInfo;
let vmNetwork: NicTarget;
let portgroup: NicTarget;
let template: ManagedObjectReference;
let templateHardware: VmHardware;
let clones = 0;

beforeAll(async () => {
  sim = await startVcsim({ datacenters: 1, clusters: 1, hostsPerCluster: 2, datastores: 2, portgroups: 1, vmsPerPool: 1 });
  client = await vcsimClient(sim);
  dc = one(await client.inventory.datacenters(), 'DC0');
  pool = one(await client.inventory.clusters(dc.ref), 'DC0_C0').resourcePool;
  datastore = one(await client.inventory.datastores(dc.ref), 'LocalDS_1');
  const networks = await client.inventory.networks(dc.ref);
  const network = one(networks, 'VM Network');
  const distributed = one(networks, 'DC0_DVPG0');
  if (distributed.kind !== 'distributed') throw new Error('DC0_DVPG0 is not a distributed port group');
  vmNetwork = { kind: 'network', network: network.ref, deviceName: network.name };
  portgroup = { kind: 'distributed', switchUuid: distributed.switchUuid, portgroupKey: distributed.portgroupKey };
  template = await makeTemplate(client, 'banlieue-hardware-template');
  templateHardware = await client.vms.hardware(template);
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

describe('vSphere VM hardware reads', () => {
  it('reads sizing, firmware, the NIC, the OS disk and its paravirtual SCSI controller in one call', () => {
    const [disk] = templateHardware.disks;

    expect(templateHardware).toMatchObject({ numCPUs: 1, memoryMB: 32, firmware: 'bios' });
    expect(templateHardware.cards).toHaveLength(1);
    expect(templateHardware.disks).toHaveLength(1);
    expect(disk).toMatchObject({ unitNumber: 0, capacityKB: 10 * GiB_IN_KB });
    expect(disk?.fileName).toMatch(/^\[LocalDS_0\] /);
    expect(templateHardware.diskControllers).toEqual([
      expect.objectContaining({ key: disk?.controllerKey, deviceType: 'ParaVirtualSCSIController', busNumber: 0 }),
    ]);
    // vcsim's model VM also puts its CD-ROM on that controller's unit 0, and
    // leaves the controller's own `device` list stale: units come from the devices.
    expect(new Set(templateHardware.diskControllers[0]?.unitsInUse)).toEqual(new Set([0]));
  });
});

describe('vSphere VM cloning with hardware changes', () => {
  it('grows the OS disk, adds a disk on the next free unit, gives the NIC a manual MAC and adds a second NIC', async () => {
    const osDisk = onlyDisk(templateHardware);
    const controller = controllerOf(templateHardware, osDisk);
    const [unit] = nextFreeUnits(controller, templateHardware.disks, 1);
    const [card] = templateHardware.cards;
    if (unit === undefined || card === undefined) throw new Error('no free unit or no NIC on the template');

    const vm = await cloneFromTemplate({
      diskGrows: [{ disk: osDisk, capacityKB: 20 * GiB_IN_KB }],
      diskAdds: [
        {
          controllerKey: controller.key,
          unitNumber: unit,
          capacityKB: GiB_IN_KB,
          provisioning: 'thin',
          datastore: { ref: datastore.ref, name: datastore.name },
        },
      ],
      nicEdits: [{ card, target: vmNetwork, macAddress: '00:50:56:3f:00:01' }],
      nicAdds: [{ target: portgroup }],
    });

    const hardware = await client.vms.hardware(vm);
    expect(hardware.disks.map((d) => [d.controllerKey, d.unitNumber, d.capacityKB]).sort()).toEqual([
      [controller.key, 0, 20 * GiB_IN_KB],
      [controller.key, 1, GiB_IN_KB],
    ]);
    const added = hardware.disks.find((d) => d.unitNumber === unit);
    expect(added?.fileName).toMatch(/^\[LocalDS_1\] .+\.vmdk$/);
    expect(added?.datastore).toEqual(datastore.ref);
    expect(hardware.cards).toHaveLength(2);
    const edited = hardware.cards.find((c) => c.key === card.key);
    expect(edited).toMatchObject({ macAddress: '00:50:56:3f:00:01', backing: { kind: 'network', deviceName: 'VM Network' } });
    expect(edited?.wire.childText('addressType')).toBe('manual');
    const second = hardware.cards.find((c) => c.key !== card.key);
    expect(second).toMatchObject({ deviceType: 'VirtualVmxnet3', backing: portgroup });
    expect(second?.macAddress).toMatch(/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/);
    expect(second?.macAddress).not.toBe('00:50:56:3f:00:01');
  });

  it('adds a NIC with a manual MAC and removes the template’s NIC', async () => {
    const [card] = templateHardware.cards;
    if (card === undefined) throw new Error('the template has no NIC');

    const vm = await cloneFromTemplate({ nicRemovals: [card], nicAdds: [{ target: vmNetwork, macAddress: '00:50:56:3f:00:02' }] });

    const { cards } = await client.vms.hardware(vm);
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ deviceType: 'VirtualVmxnet3', macAddress: '00:50:56:3f:00:02', backing: { kind: 'network', deviceName: 'VM Network' } });
    expect(cards[0]?.key).not.toBe(card.key);
  });
});

describe('vSphere VM reconfiguration of hardware', () => {
  it('grows a disk and adds eager-zeroed and thick disks on the next free units', async () => {
    const vm = await cloneFromTemplate();
    const before = await client.vms.hardware(vm);
    const osDisk = onlyDisk(before);
    const controller = controllerOf(before, osDisk);
    const units = nextFreeUnits(controller, before.disks, 2);

    await client.vms.reconfigure(vm, {
      diskGrows: [{ disk: osDisk, capacityKB: 12 * GiB_IN_KB }],
      diskAdds: [
        { controllerKey: controller.key, unitNumber: required(units[0]), capacityKB: 2 * GiB_IN_KB, provisioning: 'eagerZeroed' },
        { controllerKey: controller.key, unitNumber: required(units[1]), capacityKB: 3 * GiB_IN_KB, provisioning: 'thick' },
      ],
    });

    const after = await client.vms.hardware(vm);
    expect(units).toEqual([1, 2]);
    expect(after.disks.map((d) => [d.unitNumber, d.capacityKB, backingFlags(d)]).sort()).toEqual([
      [0, 12 * GiB_IN_KB, ['true', 'false']],
      [1, 2 * GiB_IN_KB, ['false', 'true']],
      [2, 3 * GiB_IN_KB, ['false', 'false']],
    ]);
    expect(after.disks.find((d) => d.key === osDisk.key)?.fileName).toBe(osDisk.fileName);
    expect(nextFreeUnits(controllerOf(after, osDisk), after.disks, 1)).toEqual([3]);
  });

  it('refuses to shrink a disk, failing the task with InvalidDeviceOperation', async () => {
    const vm = await cloneFromTemplate();
    const osDisk = onlyDisk(await client.vms.hardware(vm));

    await expect(client.vms.reconfigure(vm, { diskGrows: [{ disk: osDisk, capacityKB: GiB_IN_KB }] })).rejects.toMatchObject({
      kind: 'TaskFailed',
      faultType: 'InvalidDeviceOperation',
    });
  });

  it('switches the firmware to EFI with secure boot', async () => {
    const vm = await cloneFromTemplate();

    await client.vms.reconfigure(vm, { firmware: 'efi', efiSecureBoot: true });

    expect((await client.vms.hardware(vm)).firmware).toBe('efi');
    const content = await client.properties.retrieveOne(vm, ['config.bootOptions']);
    expect(content.props.get('config.bootOptions')?.childText('efiSecureBootEnabled')).toBe('true');
  });

  it('refuses secure boot on BIOS firmware, failing the task with InvalidVmConfig', async () => {
    const vm = await cloneFromTemplate();

    await expect(client.vms.reconfigure(vm, { efiSecureBoot: true })).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'InvalidVmConfig' });
  });

  it('reads back extraConfig set by reconfigure, and drops a key set to the empty value', async () => {
    const vm = await cloneFromTemplate({ extraConfig: { 'guestinfo.banlieue.phase': 'created' } });

    await client.vms.reconfigure(vm, { extraConfig: { 'guestinfo.banlieue.phase': '', 'guestinfo.banlieue.note': 'a <b> & "c"' } });

    const extraConfig = await client.vms.extraConfig(vm);
    expect(extraConfig.get('guestinfo.banlieue.note')).toBe('a <b> & "c"');
    expect(extraConfig.has('guestinfo.banlieue.phase')).toBe(false);
  });
});

describe('vSphere VM suspend', () => {
  it('suspends a powered-on VM; suspending it again fails its task with InvalidPowerState', async () => {
    const vm = await cloneFromTemplate();
    await client.vms.powerOn(vm);

    await client.vms.suspend(vm);

    expect((await client.vms.summary(vm)).powerState).toBe('suspended');
    await expect(client.vms.suspend(vm)).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'InvalidPowerState' });
  });

  it('fails to suspend a powered-off VM as TaskFailed with InvalidPowerState', async () => {
    const vm = await cloneFromTemplate();

    await expect(client.vms.suspend(vm)).rejects.toMatchObject({ kind: 'TaskFailed', faultType: 'InvalidPowerState' });
  });
});

function one<T extends { readonly name: string }>(items: readonly T[], name: string): T {
  const found = items.find((item) => item.name === name);
  if (found === undefined) throw new Error(`vcsim has no ${name} (has ${items.map((i) => i.name).join(', ')})`);
  return found;
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing');
  return value;
}

function onlyDisk(hardware: VmHardware): VirtualDiskInfo {
  expect(hardware.disks).toHaveLength(1);
  return required(hardware.disks[0]);
}

function controllerOf(hardware: VmHardware, disk: VirtualDiskInfo): DiskControllerInfo {
  return required(hardware.diskControllers.find((c) => c.key === disk.controllerKey));
}

/** [thinProvisioned, eagerlyScrub] of the disk's backing, as read. */
function backingFlags(disk: VirtualDiskInfo): (string | undefined)[] {
  const backing = disk.wire.child('backing');
  return [backing?.childText('thinProvisioned'), backing?.childText('eagerlyScrub')];
}

function cloneFromTemplate(config: VmConfigSpec = {}): Promise<ManagedObjectReference> {
  return client.vms.clone(template, dc.vmFolder, `hardware-${++clones}`, { location: { pool, datastore: datastore.ref }, config });
}
