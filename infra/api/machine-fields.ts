// Fields of the CAPI v1beta2 machine contract and the machine kinds: power, deletion, firmware,
// addresses, initialization, the control-plane endpoint, failure domains and providerID.
import { Name, StringEnum, StringMap, Timestamp, Type, type Static } from './schema.js';

export const POWER_STATES = ['PoweredOn', 'PoweredOff', 'Suspended'] as const;
export type PowerState = (typeof POWER_STATES)[number];

export function DesiredPowerState(): ReturnType<typeof StringEnum<typeof POWER_STATES>> {
  return StringEnum(POWER_STATES, {
    description: 'Power state the machine is driven to. One of PoweredOn, PoweredOff, Suspended.',
    default: 'PoweredOn',
  });
}

/** `spec.restartRequestedAt`: one restart of the VM asked for, named by when (docs/adr/0032-restart-is-a-spec-timestamp.md). */
export function RestartRequestedAt(object: string): ReturnType<typeof Timestamp> {
  return Timestamp(
    `Set to the current time (banlieue vm restart does) to restart this ${object}'s VM once: the guest is shut down as spec.desiredPowerState PoweredOff does (gracefully where the backend can), then powered on. A new value asks for another restart; status.restart says how far the last one went. Only a VM to be PoweredOn restarts: a request while it is to be off, or before its first boot, is recorded Skipped.`,
  );
}

export const RESTART_PHASES = ['ShuttingDown', 'PoweringOn', 'Restarted', 'Skipped'] as const;
export type RestartPhase = (typeof RESTART_PHASES)[number];

/** `status.restart`: the last restart request the provider took up, and how far it went. */
export const RestartStatus = Type.Object(
  {
    requestedAt: Timestamp('The spec.restartRequestedAt this record is about.'),
    phase: StringEnum(RESTART_PHASES, {
      description:
        'ShuttingDown: the guest is being shut down. PoweringOn: it is off and being powered on. Restarted: done, once. Skipped: not carried out (the VM was to be off, or had not booted yet).',
    }),
    lastTransitionTime: Timestamp('When phase last changed; for Restarted, when the VM was seen powered on again.'),
  },
  { description: 'The last restart request (spec.restartRequestedAt) and how far it went; a request is carried out once.' },
);
export type RestartStatus = Static<typeof RestartStatus>;

export const DELETION_POLICIES = ['Delete', 'Retain'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

/** What deleting the object does to its backend VM (the PersistentVolume reclaim-policy idea). */
export function DeletionPolicy(object: string): ReturnType<typeof StringEnum<typeof DELETION_POLICIES>> {
  return StringEnum(DELETION_POLICIES, {
    description: `What deleting this ${object} does to its backend VM. Delete: the VM and its disks are destroyed. Retain: the VM is left as it is on the backend (running, if it was), its banlieue ownership mark removed so that banlieue never touches it again, and an Event names it; its IPAddressClaims are left too.`,
    default: 'Delete',
  });
}

export function ObservedPowerState(): ReturnType<typeof StringEnum<typeof POWER_STATES>> {
  return StringEnum(POWER_STATES, { description: 'Power state last read from the backend.' });
}

export const FIRMWARES = ['bios', 'efi', 'efi-secure'] as const;
export type Firmware = (typeof FIRMWARES)[number];

export function FirmwareField(): ReturnType<typeof StringEnum<typeof FIRMWARES>> {
  return StringEnum(FIRMWARES, {
    description: 'Boot firmware: bios, efi, or efi-secure (UEFI with Secure Boot; needs the efiSecureBoot feature).',
    default: 'bios',
  });
}

export const DISK_PROVISIONINGS = ['thin', 'thick', 'eagerZeroed'] as const;

export const MACHINE_ADDRESS_TYPES = ['Hostname', 'ExternalIP', 'InternalIP', 'ExternalDNS', 'InternalDNS'] as const;

export const MachineAddress = Type.Object(
  {
    type: StringEnum(MACHINE_ADDRESS_TYPES, {
      description: 'Address type: Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.',
    }),
    address: Type.String({ description: 'The address.', minLength: 1, maxLength: 256 }),
  },
  { description: 'An address of the machine (CAPI MachineAddress).' },
);
export type MachineAddress = Static<typeof MachineAddress>;

/** The most addresses a status holds; a provider reports the first ones. */
export const MAX_ADDRESSES = 32;

export function Addresses(): ReturnType<typeof Type.Array<typeof MachineAddress>> {
  return Type.Array(MachineAddress, {
    description: `Addresses of the machine, as CAPI copies them to the Machine; the first ${MAX_ADDRESSES} found.`,
    maxItems: MAX_ADDRESSES,
  });
}

export const MachineInitializationStatus = Type.Object(
  {
    provisioned: Type.Optional(Type.Boolean({ description: 'True once the backend VM exists and is configured (CAPI v1beta2 contract).' })),
  },
  { description: 'Initialization progress (CAPI v1beta2 contract).' },
);

export const ApiEndpoint = Type.Object(
  {
    host: Type.String({ description: 'Hostname or IP address of the endpoint.', minLength: 1, maxLength: 512 }),
    port: Type.Integer({ description: 'TCP port of the endpoint.', minimum: 1, maximum: 65535, format: 'int32' }),
  },
  { description: 'An API endpoint.' },
);
export type ApiEndpoint = Static<typeof ApiEndpoint>;

export const ClusterFailureDomain = Type.Object(
  {
    name: Name('Failure domain name, as published by a Provider.'),
    controlPlane: Type.Optional(Type.Boolean({ description: 'Whether control-plane machines may be placed here.' })),
    attributes: Type.Optional(StringMap({ description: 'Free-form attributes (the failure domain labels).' })),
  },
  { description: 'A failure domain in the CAPI v1beta2 list shape.' },
);
export type ClusterFailureDomain = Static<typeof ClusterFailureDomain>;

/** `spec.providerID` of an InfraMachine: written once, then immutable. */
export function ProviderID(scheme: string): ReturnType<typeof Type.String> {
  return Type.String({
    description: `Backend identity of the VM (${scheme}). Written once before the VM is created; immutable afterwards.`,
    minLength: 1,
    maxLength: 512,
  });
}

export const PROVIDER_ID_IMMUTABLE = {
  rule: '!has(oldSelf.providerID) || (has(self.providerID) && self.providerID == oldSelf.providerID)',
  message: 'providerID is immutable once set',
  fieldPath: '.providerID',
} as const;
