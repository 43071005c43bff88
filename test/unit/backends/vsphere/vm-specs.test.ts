// configSpecFields: what vcsim does not check (it decodes by name, vCenter by
// XSD sequence): element order of VirtualMachineConfigSpec, of the devices sent
// back as read, and of new NICs and disks. Devices below are shaped as vcsim sends them.
import { describe, expect, it } from 'vitest';
import { encodeRequest } from '../../../../controller/backends/vsphere/client/soap-envelope.js';
import type { VirtualDiskInfo } from '../../../../controller/backends/vsphere/client/vim-types.js';
import { toEthernetCards, toVirtualDisks } from '../../../../controller/backends/vsphere/client/vm-decoders.js';
import { configSpecFields, type DiskProvisioning, type VmConfigSpec } from '../../../../controller/backends/vsphere/client/vm-specs.js';
import { parseXml, type XmlElement } from '../../../../controller/backends/vsphere/client/xml-element.js';

const DEVICES = parseXml(`<val xmlns="urn:vim25" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="ArrayOfVirtualDevice">
  <VirtualDevice xsi:type="VirtualVmxnet3">
    <key>4000</key>
    <deviceInfo><label>ethernet-0</label><summary>VM Network</summary></deviceInfo>
    <backing xsi:type="VirtualEthernetCardNetworkBackingInfo"><deviceName>VM Network</deviceName><useAutoDetect>false</useAutoDetect><network type="Network">network-7</network></backing>
    <connectable><startConnected>true</startConnected><allowGuestControl>true</allowGuestControl><connected>false</connected><status>untried</status></connectable>
    <controllerKey>100</controllerKey>
    <unitNumber>7</unitNumber>
    <addressType>generated</addressType>
    <macAddress>00:0c:29:36:63:62</macAddress>
    <wakeOnLanEnabled>true</wakeOnLanEnabled>
  </VirtualDevice>
  <VirtualDevice xsi:type="VirtualE1000">
    <key>4001</key>
    <backing xsi:type="VirtualEthernetCardNetworkBackingInfo"><deviceName>VM Network</deviceName></backing>
    <controllerKey>100</controllerKey>
    <unitNumber>8</unitNumber>
    <wakeOnLanEnabled>false</wakeOnLanEnabled>
  </VirtualDevice>
  <VirtualDevice xsi:type="VirtualDisk">
    <key>204</key>
    <deviceInfo><label>disk-1000-0</label><summary>10,485,760 KB</summary></deviceInfo>
    <backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[LocalDS_0] vm/vm.vmdk</fileName><datastore type="Datastore">datastore-1</datastore><diskMode>persistent</diskMode><thinProvisioned>true</thinProvisioned></backing>
    <controllerKey>1000</controllerKey>
    <unitNumber>0</unitNumber>
    <capacityInKB>10485760</capacityInKB>
    <capacityInBytes>10737418240</capacityInBytes>
    <storageIOAllocation><limit>-1</limit></storageIOAllocation>
  </VirtualDevice>
</val>`);

const [VMXNET3, E1000] = toEthernetCards(DEVICES);
const [DISK] = toVirtualDisks(DEVICES);
const DISK_WITHOUT_BYTES: VirtualDiskInfo = {
  ...required(DISK),
  wire: parseXml(`<VirtualDevice xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="VirtualDisk">
    <key>205</key><controllerKey>1000</controllerKey><unitNumber>1</unitNumber><capacityInKB>1024</capacityInKB>
  </VirtualDevice>`),
};
const NETWORK = { kind: 'network', network: { type: 'Network', value: 'network-7' }, deviceName: 'VM Network' } as const;
const PORTGROUP = { kind: 'distributed', switchUuid: 'dvs-uuid', portgroupKey: 'dvportgroup-11' } as const;

describe('VirtualMachineConfigSpec encoding', () => {
  it('orders deviceChange, extraConfig, bootOptions and firmware as the VirtualMachineConfigSpec sequence does', () => {
    const spec = encoded({
      firmware: 'efi',
      efiSecureBoot: true,
      extraConfig: { 'guestinfo.a': 'b' },
      diskGrows: [{ disk: required(DISK), capacityKB: 20971520 }],
      memoryMB: 2048,
      numCPUs: 2,
      uuid: '6b1e4a4c-54c4-5a4e-9a8e-0d4c1b2a3f01',
    });

    expect(names(spec)).toEqual(['uuid', 'numCPUs', 'memoryMB', 'deviceChange', 'extraConfig', 'bootOptions', 'firmware']);
    expect(spec.childText('firmware')).toBe('efi');
    expect(names(child(spec, 'bootOptions'))).toEqual(['efiSecureBootEnabled']);
    expect(child(spec, 'bootOptions').childText('efiSecureBootEnabled')).toBe('true');
  });

  it('leaves firmware, bootOptions and deviceChange out when not asked', () => {
    expect(names(encoded({ numCPUs: 4 }))).toEqual(['numCPUs']);
  });

  it('lists device changes as NIC edits, NIC removals, NIC adds, disk grows, then disk adds', () => {
    const spec = encoded({
      diskAdds: [{ controllerKey: 1000, unitNumber: 1, capacityKB: 1048576, provisioning: 'thin' }],
      diskGrows: [{ disk: required(DISK), capacityKB: 20971520 }],
      nicAdds: [{ target: PORTGROUP }],
      nicRemovals: [required(E1000)],
      nicEdits: [{ card: required(VMXNET3), target: NETWORK }],
    });

    const changes = spec.childrenNamed('deviceChange');
    expect(changes.map((c) => [c.xsiType, c.childText('operation'), child(c, 'device').xsiType, child(c, 'device').childText('key')])).toEqual([
      ['VirtualDeviceConfigSpec', 'edit', 'VirtualVmxnet3', '4000'],
      ['VirtualDeviceConfigSpec', 'remove', 'VirtualE1000', '4001'],
      ['VirtualDeviceConfigSpec', 'add', 'VirtualVmxnet3', '-100'],
      ['VirtualDeviceConfigSpec', 'edit', 'VirtualDisk', '204'],
      ['VirtualDeviceConfigSpec', 'add', 'VirtualDisk', '-200'],
    ]);
    expect(changes.map(names)).toEqual([
      ['operation', 'device'],
      ['operation', 'device'],
      ['operation', 'device'],
      ['operation', 'device'],
      ['operation', 'fileOperation', 'device'],
    ]);
  });
});

describe('NIC device changes', () => {
  it('sets a manual MAC in place on an edited NIC, keeping the rest as read', () => {
    const device = onlyDevice({ nicEdits: [{ card: required(VMXNET3), target: PORTGROUP, macAddress: '00:50:56:3f:00:01' }] });

    expect(names(device)).toEqual([
      'key',
      'deviceInfo',
      'backing',
      'connectable',
      'controllerKey',
      'unitNumber',
      'addressType',
      'macAddress',
      'wakeOnLanEnabled',
    ]);
    expect(device.childText('addressType')).toBe('manual');
    expect(device.childText('macAddress')).toBe('00:50:56:3f:00:01');
    expect(child(device, 'backing').xsiType).toBe('VirtualEthernetCardDistributedVirtualPortBackingInfo');
    expect(child(child(device, 'backing'), 'port').childText('portgroupKey')).toBe('dvportgroup-11');
  });

  it('inserts addressType and macAddress after the VirtualDevice fields of a NIC read without them', () => {
    const device = onlyDevice({ nicEdits: [{ card: required(E1000), target: NETWORK, macAddress: '00:50:56:3f:00:02' }] });

    expect(names(device)).toEqual(['key', 'backing', 'controllerKey', 'unitNumber', 'addressType', 'macAddress', 'wakeOnLanEnabled']);
  });

  it('keeps the read MAC when the edit names none', () => {
    const device = onlyDevice({ nicEdits: [{ card: required(VMXNET3), target: NETWORK }] });

    expect([device.childText('addressType'), device.childText('macAddress')]).toEqual(['generated', '00:0c:29:36:63:62']);
  });

  it('adds VirtualVmxnet3 NICs with negative temporary keys, connected, with generated or manual MACs', () => {
    const devices = encoded({ nicAdds: [{ target: NETWORK }, { target: PORTGROUP, macAddress: '00:50:56:3f:00:03' }] })
      .childrenNamed('deviceChange')
      .map((c) => child(c, 'device'));

    expect(devices.map(names)).toEqual([
      ['key', 'backing', 'connectable', 'addressType'],
      ['key', 'backing', 'connectable', 'addressType', 'macAddress'],
    ]);
    expect(devices.map((d) => [d.childText('key'), d.childText('addressType'), d.childText('macAddress')])).toEqual([
      ['-100', 'generated', undefined],
      ['-101', 'manual', '00:50:56:3f:00:03'],
    ]);
    expect(names(child(required(devices[0]), 'connectable'))).toEqual(['startConnected', 'allowGuestControl', 'connected']);
    expect(names(child(required(devices[0]), 'backing'))).toEqual(['deviceName', 'network']);
  });
});

describe('disk device changes', () => {
  it('grows a disk by sending it whole as read with capacityInKB and capacityInBytes replaced in place', () => {
    const device = onlyDevice({ diskGrows: [{ disk: required(DISK), capacityKB: 20971520 }] });

    expect(names(device)).toEqual(['key', 'deviceInfo', 'backing', 'controllerKey', 'unitNumber', 'capacityInKB', 'capacityInBytes', 'storageIOAllocation']);
    expect([device.childText('capacityInKB'), device.childText('capacityInBytes')]).toEqual(['20971520', '21474836480']);
    expect(child(device, 'backing').childText('fileName')).toBe('[LocalDS_0] vm/vm.vmdk');
  });

  it('grows a disk read without capacityInBytes by capacityInKB alone', () => {
    const device = onlyDevice({ diskGrows: [{ disk: DISK_WITHOUT_BYTES, capacityKB: 2048 }] });

    expect(names(device)).toEqual(['key', 'controllerKey', 'unitNumber', 'capacityInKB']);
    expect(device.childText('capacityInKB')).toBe('2048');
  });

  it.each<[DiskProvisioning, string, string]>([
    ['thin', 'true', 'false'],
    ['thick', 'false', 'false'],
    ['eagerZeroed', 'false', 'true'],
  ])('creates a %s disk with thinProvisioned %s and eagerlyScrub %s', (provisioning, thin, eager) => {
    const change = encoded({ diskAdds: [{ controllerKey: 1000, unitNumber: 1, capacityKB: 1048576, provisioning }] }).childrenNamed('deviceChange')[0];
    const device = child(required(change), 'device');
    const backing = child(device, 'backing');

    expect(change?.childText('fileOperation')).toBe('create');
    expect(names(device)).toEqual(['key', 'backing', 'controllerKey', 'unitNumber', 'capacityInKB']);
    expect([device.childText('controllerKey'), device.childText('unitNumber'), device.childText('capacityInKB')]).toEqual(['1000', '1', '1048576']);
    expect(backing.xsiType).toBe('VirtualDiskFlatVer2BackingInfo');
    expect(names(backing)).toEqual(['fileName', 'diskMode', 'thinProvisioned', 'eagerlyScrub']);
    expect([backing.childText('fileName'), backing.childText('diskMode')]).toEqual(['', 'persistent']);
    expect([backing.childText('thinProvisioned'), backing.childText('eagerlyScrub')]).toEqual([thin, eager]);
  });

  it('names only the datastore of a new disk placed on one, so the server names the vmdk', () => {
    const device = onlyDevice({
      diskAdds: [
        {
          controllerKey: 1000,
          unitNumber: 2,
          capacityKB: 1024,
          provisioning: 'thin',
          datastore: { ref: { type: 'Datastore', value: 'datastore-2' }, name: 'LocalDS_1' },
        },
      ],
    });
    const backing = child(device, 'backing');

    expect(names(backing)).toEqual(['fileName', 'datastore', 'diskMode', 'thinProvisioned', 'eagerlyScrub']);
    expect(backing.childText('fileName')).toBe('[LocalDS_1]');
    expect(child(backing, 'datastore').attribute('type')).toBe('Datastore');
    expect(backing.childText('datastore')).toBe('datastore-2');
  });

  it('gives each new disk its own negative temporary key', () => {
    const keys = encoded({
      diskAdds: [
        { controllerKey: 1000, unitNumber: 1, capacityKB: 1024, provisioning: 'thin' },
        { controllerKey: 1000, unitNumber: 2, capacityKB: 1024, provisioning: 'thin' },
      ],
    })
      .childrenNamed('deviceChange')
      .map((c) => child(c, 'device').childText('key'));

    expect(keys).toEqual(['-200', '-201']);
  });
});

/** The `<spec>` of a ReconfigVM_Task request, as encoded on the wire and parsed back. */
function encoded(config: VmConfigSpec): XmlElement {
  const envelope = parseXml(encodeRequest('ReconfigVM_Task', { spec: configSpecFields(config) }));
  return child(child(child(envelope, 'Body'), 'ReconfigVM_Task'), 'spec');
}

function onlyDevice(config: VmConfigSpec): XmlElement {
  const changes = encoded(config).childrenNamed('deviceChange');
  expect(changes).toHaveLength(1);
  return child(required(changes[0]), 'device');
}

function names(element: XmlElement): string[] {
  return element.children.map((c) => c.name);
}

function child(element: XmlElement, name: string): XmlElement {
  return required(element.child(name));
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('missing');
  return value;
}
