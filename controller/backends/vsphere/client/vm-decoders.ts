// Pure decoders: PropertyCollector results → VmSummary and EthernetCard.
import type { ObjectContent } from './property-collector.js';
import type { EthernetCard, GuestNic, NicBacking, VirtualMachinePowerState, VmSummary } from './vim-types.js';
import { localName, type XmlElement } from './xml-element.js';
import { toBoolean, toMoRef, toNumber } from './wire-values.js';

/** The property paths toVmSummary reads. */
export const VM_SUMMARY_PATHS = [
  'name',
  'config.uuid',
  'config.instanceUuid',
  'config.template',
  'runtime.powerState',
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
  if (!isPowerState(powerState)) throw new Error(`VirtualMachine ${content.obj.value}: runtime.powerState "${powerState}"`);
  return {
    ref: content.obj,
    name: text('name') ?? '',
    uuid: text('config.uuid'),
    instanceUuid: text('config.instanceUuid'),
    template: toBoolean(content.props.get('config.template')) ?? false,
    powerState,
    ipAddress: emptyToUndefined(text('guest.ipAddress')),
    guestNics: (content.props.get('guest.net')?.childrenNamed('GuestNicInfo') ?? []).map(toGuestNic),
  };
}

/** The NICs in a `config.hardware.device` value (ArrayOfVirtualDevice). */
export function toEthernetCards(devices: XmlElement | undefined): EthernetCard[] {
  const cards: EthernetCard[] = [];
  for (const device of devices?.children ?? []) {
    const deviceType = device.xsiType === undefined ? undefined : localName(device.xsiType);
    if (deviceType === undefined || !ETHERNET_CARD_TYPES.has(deviceType)) continue;
    const key = toNumber(device.child('key'));
    if (key === undefined) throw new Error(`${deviceType} without a key`);
    cards.push({
      key,
      deviceType,
      label: device.child('deviceInfo')?.childText('label'),
      macAddress: emptyToUndefined(device.childText('macAddress')),
      backing: toNicBacking(device.child('backing')),
      wire: device,
    });
  }
  return cards;
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
