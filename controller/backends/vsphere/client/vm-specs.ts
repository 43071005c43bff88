// Pure encoders for the VM specs banlieue sends: CloneSpec, RelocateSpec,
// ConfigSpec (uuid, CPU, memory, extraConfig, NIC backing edits). Field order
// follows the vim25 XSD sequences; vCenter rejects out-of-order elements.
import type { XmlFields } from './soap-envelope.js';
import type { EthernetCard, ManagedObjectReference } from './vim-types.js';
import { elementToFields, moRefFields, typedFields } from './wire-values.js';

/** Where a clone goes. A clone of a template needs `pool`. */
export interface RelocateSpec {
  readonly folder?: ManagedObjectReference;
  readonly datastore?: ManagedObjectReference;
  readonly pool?: ManagedObjectReference;
  readonly host?: ManagedObjectReference;
}

/** The port group a NIC is moved to. */
export type NicTarget =
  | { readonly kind: 'network'; readonly network: ManagedObjectReference; readonly deviceName: string }
  | { readonly kind: 'distributed'; readonly switchUuid: string; readonly portgroupKey: string };

/** Re-plug an existing NIC (read with VirtualMachines.ethernetCards) into `target`. */
export interface NicBackingEdit {
  readonly card: EthernetCard;
  readonly target: NicTarget;
}

export interface VmConfigSpec {
  /** BIOS UUID to set (`config.uuid`). */
  readonly uuid?: string;
  readonly numCPUs?: number;
  readonly memoryMB?: number;
  readonly nicEdits?: readonly NicBackingEdit[];
  /** extraConfig entries; an empty value removes the key. */
  readonly extraConfig?: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
}

export interface CloneSpec {
  readonly location: RelocateSpec;
  readonly config?: VmConfigSpec;
  /** @default false */
  readonly powerOn?: boolean;
  /** Make the clone a template. @default false */
  readonly template?: boolean;
}

export function cloneSpecFields(spec: CloneSpec): XmlFields {
  return {
    location: relocateSpecFields(spec.location),
    template: spec.template ?? false,
    config: spec.config === undefined ? undefined : configSpecFields(spec.config),
    powerOn: spec.powerOn ?? false,
  };
}

export function relocateSpecFields(spec: RelocateSpec): XmlFields {
  return {
    folder: optionalMoRef(spec.folder),
    datastore: optionalMoRef(spec.datastore),
    pool: optionalMoRef(spec.pool),
    host: optionalMoRef(spec.host),
  };
}

export function configSpecFields(spec: VmConfigSpec): XmlFields {
  const extraConfig = spec.extraConfig instanceof Map ? [...spec.extraConfig] : Object.entries(spec.extraConfig ?? {});
  return {
    uuid: spec.uuid,
    numCPUs: spec.numCPUs,
    memoryMB: spec.memoryMB,
    deviceChange: spec.nicEdits?.map(nicEditFields),
    extraConfig: extraConfig.map(([key, value]) =>
      typedFields('OptionValue', { key, value: { '@_xsi:type': 'xsd:string', '#text': value } }),
    ),
  };
}

/**
 * An edit of the whole device as read, with only the backing replaced: what
 * govc and CAPV send. A partial device would let vCenter reset what is left out.
 */
function nicEditFields(edit: NicBackingEdit): XmlFields {
  const device = { ...elementToFields(edit.card.wire), '@_xsi:type': edit.card.deviceType };
  return typedFields('VirtualDeviceConfigSpec', { operation: 'edit', device: withBacking(device, backingFields(edit.target)) });
}

/** The device with its backing replaced at its place in the sequence (key, deviceInfo, backing, connectable…). */
function withBacking(device: XmlFields, backing: XmlFields): XmlFields {
  const entries = Object.entries(device).filter(([name]) => name !== 'backing');
  const after = entries.findLastIndex(([name]) => name.startsWith('@_') || name === 'key' || name === 'deviceInfo');
  entries.splice(after + 1, 0, ['backing', backing]);
  return Object.fromEntries(entries);
}

function backingFields(target: NicTarget): XmlFields {
  if (target.kind === 'network') {
    return typedFields('VirtualEthernetCardNetworkBackingInfo', {
      deviceName: target.deviceName,
      network: moRefFields(target.network),
    });
  }
  return typedFields('VirtualEthernetCardDistributedVirtualPortBackingInfo', {
    port: { switchUuid: target.switchUuid, portgroupKey: target.portgroupKey },
  });
}

function optionalMoRef(ref: ManagedObjectReference | undefined): XmlFields | undefined {
  return ref === undefined ? undefined : moRefFields(ref);
}
