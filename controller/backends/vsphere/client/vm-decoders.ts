// Pure decoders: PropertyCollector results → VmSummary, and the devices of
// `config.hardware.device` → EthernetCard, VirtualDiskInfo, DiskControllerInfo.
import type { ObjectContent } from './property-collector.js';
import { diskControllerBus } from './disk-units.js';
import type { DiskControllerInfo, EthernetCard, GuestNic, NicBacking, VirtualDiskInfo, VirtualMachinePowerState, VmSummary } from './vim-types.js';
import { localName, type XmlElement } from './xml-element.js';
import { toBoolean, toMoRef, toNumber } from './wire-values.js';

/** The property paths toVmSummary reads. */
export const VM_SUMMARY_PATHS = [
  'name',
  'config.uuid',
  'config.instanceUuid',
  'config.template',
  'runtime.powerState',
  // Where vcsim keeps it too (it updates summary.runtime only).
  'summary.runtime.bootTime',
  'guest.ipAddress',
  'guest.net',
] as const;

// Concrete subtypes of VirtualEthernetCard in vim25 (a device's xsi:type is always concrete).
const ETHERNET_CARD_TYPES: ReadonlySet<string> = new Set([
  'VirtualEthernetCard',
  'VirtualE1000',
  'VirtualE1000e',
  'VirtualPCNet32',
  'VirtualSriovEthernetCard',
  'VirtualVmxnet',
  'VirtualVmxnet2',
  'VirtualVmxnet3',
  'VirtualVmxnet3Vrdma',
]);

export function toVmSummary(content: ObjectContent): VmSummary {
  const text = (path: string): string | undefined => content.props.get(path)?.text;
  const powerState = text('runtime.powerState');
  const bootTime = text('summary.runtime.bootTime');
  if (!isPowerState(powerState)) throw new Error(`VirtualMachine ${content.obj.value}: runtime.powerState "${powerState}"`);
  return {
    ref: content.obj,
    name: text('name') ?? '',
    uuid: text('config.uuid'),
    instanceUuid: text('config.instanceUuid'),
    template: toBoolean(content.props.get('config.template')) ?? false,
    powerState,
    ...(bootTime ? { bootTime } : {}),
    ipAddress: emptyToUndefined(text('guest.ipAddress')),
    guestNics: (content.props.get('guest.net')?.childrenNamed('GuestNicInfo') ?? []).map(toGuestNic),
  };
}

/** The NICs in a `config.hardware.device` value (ArrayOfVirtualDevice). */
export function toEthernetCards(devices: XmlElement | undefined): EthernetCard[] {
  const cards: EthernetCard[] = [];
  for (const device of devices?.children ?? []) {
    const deviceType = deviceTypeOf(device);
    if (deviceType === undefined || !ETHERNET_CARD_TYPES.has(deviceType)) continue;
    cards.push({
      key: requiredNumber(device, deviceType, 'key'),
      deviceType,
      label: device.child('deviceInfo')?.childText('label'),
      macAddress: emptyToUndefined(device.childText('macAddress')),
      backing: toNicBacking(device.child('backing')),
      wire: device,
    });
  }
  return cards;
}

/** The VirtualDisks in a `config.hardware.device` value. */
export function toVirtualDisks(devices: XmlElement | undefined): VirtualDiskInfo[] {
  const disks: VirtualDiskInfo[] = [];
  for (const device of devices?.children ?? []) {
    if (deviceTypeOf(device) !== 'VirtualDisk') continue;
    const backing = device.child('backing');
    const datastore = backing?.child('datastore');
    disks.push({
      key: requiredNumber(device, 'VirtualDisk', 'key'),
      controllerKey: requiredNumber(device, 'VirtualDisk', 'controllerKey'),
      unitNumber: toNumber(device.child('unitNumber')),
      capacityKB: capacityKB(device),
      label: device.child('deviceInfo')?.childText('label'),
      datastore: datastore === undefined ? undefined : toMoRef(datastore),
      fileName: emptyToUndefined(backing?.childText('fileName')),
      wire: device,
    });
  }
  return disks;
}

/** The controllers disks attach to (SCSI, NVMe, SATA) in a `config.hardware.device` value. */
export function toDiskControllers(devices: XmlElement | undefined): DiskControllerInfo[] {
  const all = devices?.children ?? [];
  const controllers: DiskControllerInfo[] = [];
  for (const device of all) {
    const deviceType = deviceTypeOf(device);
    if (deviceType === undefined || diskControllerBus(deviceType) === undefined) continue;
    const key = requiredNumber(device, deviceType, 'key');
    controllers.push({
      key,
      deviceType,
      busNumber: requiredNumber(device, deviceType, 'busNumber'),
      deviceKeys: device.childrenNamed('device').flatMap((d) => toNumber(d) ?? []),
      unitsInUse: unitsOn(key, all),
    });
  }
  return controllers;
}

/** Units taken on controller `key`, read from the devices themselves. */
function unitsOn(key: number, devices: readonly XmlElement[]): number[] {
  const units: number[] = [];
  for (const device of devices) {
    const unit = toNumber(device.child('unitNumber'));
    if (unit !== undefined && toNumber(device.child('controllerKey')) === key) units.push(unit);
  }
  return units;
}

/** capacityInKB is required by the schema; servers since 5.5 also send capacityInBytes. */
function capacityKB(disk: XmlElement): number {
  const kb = toNumber(disk.child('capacityInKB'));
  if (kb !== undefined) return kb;
  const bytes = toNumber(disk.child('capacityInBytes'));
  if (bytes === undefined) throw new Error('VirtualDisk without a capacity');
  return Math.floor(bytes / 1024);
}

function deviceTypeOf(device: XmlElement): string | undefined {
  return device.xsiType === undefined ? undefined : localName(device.xsiType);
}

/** A child number the schema requires. */
function requiredNumber(device: XmlElement, deviceType: string, name: string): number {
  const value = toNumber(device.child(name));
  if (value === undefined) throw new Error(`${deviceType} without a ${name}`);
  return value;
}

function toNicBacking(backing: XmlElement | undefined): NicBacking {
  const backingType = backing?.xsiType === undefined ? undefined : localName(backing.xsiType);
  if (backing !== undefined && backingType === 'VirtualEthernetCardNetworkBackingInfo') {
    const network = backing.child('network');
    return { kind: 'network', deviceName: backing.childText('deviceName') ?? '', network: network === undefined ? undefined : toMoRef(network) };
  }
  const port = backing?.child('port');
  if (port !== undefined && backingType === 'VirtualEthernetCardDistributedVirtualPortBackingInfo') {
    return { kind: 'distributed', switchUuid: port.childText('switchUuid') ?? '', portgroupKey: port.childText('portgroupKey') ?? '' };
  }
  return { kind: 'other', backingType };
}

function toGuestNic(nic: XmlElement): GuestNic {
  return {
    macAddress: emptyToUndefined(nic.childText('macAddress')),
    network: emptyToUndefined(nic.childText('network')),
    ipAddresses: nic.childrenNamed('ipAddress').map((ip) => ip.text),
    connected: toBoolean(nic.child('connected')) ?? false,
    deviceConfigId: toNumber(nic.child('deviceConfigId')),
  };
}

function isPowerState(state: string | undefined): state is VirtualMachinePowerState {
  return state === 'poweredOn' || state === 'poweredOff' || state === 'suspended';
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}
