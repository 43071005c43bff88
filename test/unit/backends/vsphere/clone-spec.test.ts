// buildCloneSpec: one CloneVM_Task shapes the whole VM (identity, sizing,
// firmware, disks, NICs). Template devices are decoded from vim25 XML, as read.
import { describe, expect, it } from 'vitest';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BackendError, BackendErrorKind } from '../../../../controller/backends/backend-error.js';
import type { ManagedObjectReference, VmHardware } from '../../../../controller/backends/vsphere/client/vim-types.js';
import { toDiskControllers, toEthernetCards, toVirtualDisks } from '../../../../controller/backends/vsphere/client/vm-decoders.js';
import type { NicTarget } from '../../../../controller/backends/vsphere/client/vm-specs.js';
import { parseXml } from '../../../../controller/backends/vsphere/client/xml-element.js';
import { buildCloneSpec } from '../../../../controller/backends/vsphere/machine/clone-spec.js';
import type { CloneTargets } from '../../../../controller/backends/vsphere/machine/clone-targets.js';

const UUID = '74e4d702-bafd-5e07-8195-ab7a57a18b2a';
const MARK = 'VSphereMachine/team-a/web-1';
const GIB_KB = 1024 * 1024;

const disk = (key: number, controllerKey: number, unit: number, capacityKB: number): string => `
  <VirtualDevice xsi:type="VirtualDisk">
    <key>${key}</key>
    <backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[ds-tmpl] tmpl/tmpl_${key}.vmdk</fileName><datastore type="Datastore">datastore-1</datastore></backing>
    <controllerKey>${controllerKey}</controllerKey><unitNumber>${unit}</unitNumber><capacityInKB>${capacityKB}</capacityInKB>
  </VirtualDevice>`;

const nic = (type: string, key: number, mac: string): string => `
  <VirtualDevice xsi:type="${type}">
    <key>${key}</key>
    <backing xsi:type="VirtualEthernetCardNetworkBackingInfo"><deviceName>VM Network</deviceName><network type="Network">network-7</network></backing>
    <controllerKey>100</controllerKey><addressType>generated</addressType><macAddress>${mac}</macAddress>
  </VirtualDevice>`;

const PVSCSI = `
  <VirtualDevice xsi:type="ParaVirtualSCSIController">
    <key>1000</key><controllerKey>100</controllerKey><unitNumber>3</unitNumber><busNumber>0</busNumber><device>2000</device><device>2001</device>
  </VirtualDevice>`;

function hardware(devices: string): VmHardware {
  const list = parseXml(`<val xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ArrayOfVirtualDevice">${devices}</val>`);
  return {
    numCPUs: 1,
    memoryMB: 1024,
    firmware: 'bios',
    cards: toEthernetCards(list),
    disks: toVirtualDisks(list),
    diskControllers: toDiskControllers(list),
  };
}

/**
 * A 10 GiB OS disk (key 2000, unit 0) and a 1 GiB disk (key 2001, unit 1) on a
 * PVSCSI controller; a vmxnet3 (4000) and an e1000 (4001). Devices are listed
 * out of key order on purpose.
 */
const TEMPLATE = hardware(
  PVSCSI +
    disk(2001, 1000, 1, GIB_KB) +
    disk(2000, 1000, 0, 10 * GIB_KB) +
    nic('VirtualE1000', 4001, '00:50:56:00:00:02') +
    nic('VirtualVmxnet3', 4000, '00:50:56:00:00:01'),
);
const [E1000, VMXNET3] = TEMPLATE.cards;
const OS_DISK = TEMPLATE.disks.find((d) => d.key === 2000);

const moref = (type: string, value: string): ManagedObjectReference => ({ type, value });
const PROD: NicTarget = { kind: 'distributed', switchUuid: 'dvs-uuid', portgroupKey: 'dvportgroup-11' };
const BACKUP: NicTarget = { kind: 'network', network: moref('Network', 'network-8'), deviceName: 'backup' };
const STORAGE: NicTarget = { kind: 'network', network: moref('Network', 'network-9'), deviceName: 'storage' };
const DATASTORE = { ref: moref('Datastore', 'datastore-12'), name: 'ds-ssd' };

function targets(change: Partial<CloneTargets> = {}): CloneTargets {
  return {
    datacenter: {
      ref: moref('Datacenter', 'datacenter-2'),
      name: 'dc1',
      vmFolder: moref('Folder', 'group-v4'),
      hostFolder: moref('Folder', 'group-h5'),
      datastoreFolder: moref('Folder', 'group-s6'),
      networkFolder: moref('Folder', 'group-n7'),
    },
    cluster: {
      ref: moref('ClusterComputeResource', 'domain-c9'),
      name: 'c1',
      resourcePool: moref('ResourcePool', 'resgroup-10'),
      datastores: [],
      networks: [],
      hosts: [],
    },
    pool: moref('ResourcePool', 'resgroup-10'),
    folder: moref('Folder', 'group-v4'),
    datastore: undefined,
    template: moref('VirtualMachine', 'vm-1'),
    nics: [],
    ...change,
  };
}

function spec(change: Partial<VSphereMachineSpec> = {}): VSphereMachineSpec {
  return { template: 'ubuntu-2404', numCpus: 4, memoryMiB: 8192, ...change };
}

/** The BackendError `build` throws. */
function rejection(build: () => unknown): BackendError {
  try {
    build();
  } catch (err) {
    if (err instanceof BackendError) return err;
    throw err;
  }
  throw new Error('expected a BackendError');
}

describe('vSphere CloneSpec', () => {
  it('creates the VM with its UUID, CPUs and memory, powered off', () => {
    const clone = buildCloneSpec(spec(), UUID, MARK, targets(), TEMPLATE);

    expect(clone.config).toMatchObject({ uuid: UUID, numCPUs: 4, memoryMB: 8192 });
    expect(clone.powerOn).toBe(false);
    expect(clone.template).toBeUndefined();
  });

  it('marks the VM as its machine’s in extraConfig, outside guestinfo', () => {
    expect(buildCloneSpec(spec(), UUID, MARK, targets(), TEMPLATE).config?.extraConfig).toEqual({ 'banlieue.owner': MARK });
  });

  describe('location', () => {
    it('places the clone in the resource pool and folder, on the template’s datastore when none is asked', () => {
      expect(buildCloneSpec(spec(), UUID, MARK, targets(), TEMPLATE).location).toEqual({
        pool: moref('ResourcePool', 'resgroup-10'),
        folder: moref('Folder', 'group-v4'),
      });
    });

    it('moves the clone to the resolved datastore', () => {
      const location = buildCloneSpec(spec(), UUID, MARK, targets({ datastore: DATASTORE, folder: moref('Folder', 'group-v99') }), TEMPLATE).location;
      expect(location).toEqual({ pool: moref('ResourcePool', 'resgroup-10'), folder: moref('Folder', 'group-v99'), datastore: DATASTORE.ref });
    });
  });

  describe('firmware', () => {
    it.each([
      [undefined, 'bios', undefined],
      ['bios', 'bios', undefined],
      ['efi', 'efi', false],
      ['efi-secure', 'efi', true],
    ] as const)('maps spec.firmware %s to firmware %s with efiSecureBoot %s', (firmware, expected, secureBoot) => {
      const config = buildCloneSpec(spec(firmware ? { firmware } : {}), UUID, MARK, targets(), TEMPLATE).config;

      expect(config?.firmware).toBe(expected);
      expect(config?.efiSecureBoot).toBe(secureBoot);
      if (secureBoot === undefined) expect(config).not.toHaveProperty('efiSecureBoot');
    });
  });

  describe('disks', () => {
    it('leaves the template’s disks alone when spec.disks is unset', () => {
      const config = buildCloneSpec(spec(), UUID, MARK, targets(), TEMPLATE).config;
      expect(config).not.toHaveProperty('diskGrows');
      expect(config).not.toHaveProperty('diskAdds');
    });

    it('grows the OS disk, the template disk with the lowest key, to the first disk’s size', () => {
      const config = buildCloneSpec(spec({ disks: [{ name: 'os', sizeGiB: 40 }] }), UUID, MARK, targets(), TEMPLATE).config;
      expect(config?.diskGrows).toEqual([{ disk: OS_DISK, capacityKB: 40 * GIB_KB }]);
      expect(config?.diskAdds).toBeUndefined();
    });

    it.each([
      ['the same size', 10],
      ['smaller', 5],
    ])('never shrinks the OS disk: nothing to grow when the first disk is %s', (_what, sizeGiB) => {
      expect(buildCloneSpec(spec({ disks: [{ name: 'os', sizeGiB }] }), UUID, MARK, targets(), TEMPLATE).config?.diskGrows).toEqual([]);
    });

    it('adds the other disks on the OS disk’s controller, at free units, thin unless asked otherwise', () => {
      const disks = [
        { name: 'os', sizeGiB: 10 },
        { name: 'data', sizeGiB: 100 },
        { name: 'logs', sizeGiB: 20, provisioning: 'thick' as const },
        { name: 'db', sizeGiB: 50, provisioning: 'eagerZeroed' as const },
      ];
      const config = buildCloneSpec(spec({ disks }), UUID, MARK, targets(), TEMPLATE).config;

      expect(config?.diskGrows).toEqual([]);
      expect(config?.diskAdds).toEqual([
        { controllerKey: 1000, unitNumber: 2, capacityKB: 100 * GIB_KB, provisioning: 'thin' },
        { controllerKey: 1000, unitNumber: 3, capacityKB: 20 * GIB_KB, provisioning: 'thick' },
        { controllerKey: 1000, unitNumber: 4, capacityKB: 50 * GIB_KB, provisioning: 'eagerZeroed' },
      ]);
    });

    it('skips SCSI unit 7, the controller’s own, when adding disks', () => {
      const disks = [{ name: 'os', sizeGiB: 10 }, ...Array.from({ length: 6 }, (_, i) => ({ name: `d${i}`, sizeGiB: 1 }))];
      const units = buildCloneSpec(spec({ disks }), UUID, MARK, targets(), TEMPLATE).config?.diskAdds?.map((d) => d.unitNumber);
      expect(units).toEqual([2, 3, 4, 5, 6, 8]);
    });

    it('puts added disks on the resolved datastore', () => {
      const disks = [
        { name: 'os', sizeGiB: 10 },
        { name: 'data', sizeGiB: 100 },
      ];
      expect(buildCloneSpec(spec({ disks }), UUID, MARK, targets({ datastore: DATASTORE }), TEMPLATE).config?.diskAdds).toEqual([
        { controllerKey: 1000, unitNumber: 2, capacityKB: 100 * GIB_KB, provisioning: 'thin', datastore: DATASTORE },
      ]);
    });

    it('is Rejected, counting the room left, when the controller cannot take every disk', () => {
      // 15 SCSI units, two taken by the template: room for 13.
      const disks = [{ name: 'os', sizeGiB: 10 }, ...Array.from({ length: 14 }, (_, i) => ({ name: `d${i}`, sizeGiB: 1 }))];
      const err = rejection(() => buildCloneSpec(spec({ disks }), UUID, MARK, targets(), TEMPLATE));

      expect(err.kind).toBe(BackendErrorKind.Rejected);
      expect(err.message).toBe('template "ubuntu-2404": controller ParaVirtualSCSIController has room for 13 more disks, spec.disks asks for 14');
    });

    it('takes as many disks as the controller has room for', () => {
      const disks = [{ name: 'os', sizeGiB: 10 }, ...Array.from({ length: 13 }, (_, i) => ({ name: `d${i}`, sizeGiB: 1 }))];
      expect(buildCloneSpec(spec({ disks }), UUID, MARK, targets(), TEMPLATE).config?.diskAdds).toHaveLength(13);
    });

    it('is Rejected when the template has no disk to boot from', () => {
      const err = rejection(() => buildCloneSpec(spec({ disks: [{ name: 'os', sizeGiB: 10 }] }), UUID, MARK, targets(), hardware(PVSCSI)));
      expect(err.kind).toBe(BackendErrorKind.Rejected);
      expect(err.message).toBe('template "ubuntu-2404" has no disk to boot from');
    });

    it('is Rejected when extra disks are asked and the OS disk is on a controller disks cannot be added to', () => {
      const ide = hardware(
        `<VirtualDevice xsi:type="VirtualIDEController"><key>200</key><busNumber>0</busNumber></VirtualDevice>${disk(3000, 200, 0, 10 * GIB_KB)}`,
      );
      const err = rejection(() =>
        buildCloneSpec(
          spec({
            disks: [
              { name: 'os', sizeGiB: 20 },
              { name: 'data', sizeGiB: 1 },
            ],
          }),
          UUID,
          MARK,
          targets(),
          ide,
        ),
      );

      expect(err.kind).toBe(BackendErrorKind.Rejected);
      expect(err.message).toContain('template "ubuntu-2404"');
      expect(err.message).toContain('controller 200');
    });
  });

  describe('NICs', () => {
    it('leaves the template’s NICs untouched when spec.network is unset', () => {
      const config = buildCloneSpec(spec(), UUID, MARK, targets(), TEMPLATE).config;
      for (const field of ['nicEdits', 'nicAdds', 'nicRemovals']) expect(config).not.toHaveProperty(field);
    });

    it('re-plugs the existing NICs in key order, with a MAC only where spec.network sets one', () => {
      const network = [
        { name: 'eth0', portGroup: 'prod', macAddress: '00:50:56:3f:00:01' },
        { name: 'eth1', portGroup: 'backup' },
      ];
      const config = buildCloneSpec(spec({ network }), UUID, MARK, targets({ nics: [PROD, BACKUP] }), TEMPLATE).config;

      expect(config?.nicEdits).toEqual([
        { card: VMXNET3, target: PROD, macAddress: '00:50:56:3f:00:01' },
        { card: E1000, target: BACKUP },
      ]);
      expect(config?.nicAdds).toEqual([]);
      expect(config?.nicRemovals).toEqual([]);
    });

    it('adds the NICs the template lacks, with their MACs', () => {
      const network = [
        { name: 'eth0', portGroup: 'prod' },
        { name: 'eth1', portGroup: 'backup' },
        { name: 'eth2', portGroup: 'storage', macAddress: '00:50:56:3f:00:03' },
      ];
      const config = buildCloneSpec(spec({ network }), UUID, MARK, targets({ nics: [PROD, BACKUP, STORAGE] }), TEMPLATE).config;

      expect(config?.nicEdits?.map((e) => e.card.key)).toEqual([4000, 4001]);
      expect(config?.nicAdds).toEqual([{ target: STORAGE, macAddress: '00:50:56:3f:00:03' }]);
      expect(config?.nicRemovals).toEqual([]);
    });

    it('removes the template NICs beyond spec.network', () => {
      const config = buildCloneSpec(spec({ network: [{ name: 'eth0', portGroup: 'prod' }] }), UUID, MARK, targets({ nics: [PROD] }), TEMPLATE).config;

      expect(config?.nicEdits).toEqual([{ card: VMXNET3, target: PROD }]);
      expect(config?.nicAdds).toEqual([]);
      expect(config?.nicRemovals).toEqual([E1000]);
    });

    it('adds every NIC to a template without any', () => {
      const bare = hardware(PVSCSI + disk(2000, 1000, 0, 10 * GIB_KB));
      const network = [
        { name: 'eth0', portGroup: 'prod', macAddress: '00:50:56:3f:00:01' },
        { name: 'eth1', portGroup: 'backup' },
      ];
      const config = buildCloneSpec(spec({ network }), UUID, MARK, targets({ nics: [PROD, BACKUP] }), bare).config;

      expect(config?.nicEdits).toEqual([]);
      expect(config?.nicAdds).toEqual([{ target: PROD, macAddress: '00:50:56:3f:00:01' }, { target: BACKUP }]);
      expect(config?.nicRemovals).toEqual([]);
    });
  });
});
