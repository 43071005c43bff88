// Shapes shared by several kinds (upstream common.rs, CAPI v1beta2 contract types).
import { isIP } from 'node:net';
import { ListMap, ListSet, Name, StringEnum, StringMap, Timestamp, Type, type Static } from './schema.js';

export const POWER_STATES = ['PoweredOn', 'PoweredOff', 'Suspended'] as const;
export type PowerState = (typeof POWER_STATES)[number];

export function DesiredPowerState(): ReturnType<typeof StringEnum<typeof POWER_STATES>> {
  return StringEnum(POWER_STATES, {
    description: 'Power state the machine is driven to. One of PoweredOn, PoweredOff, Suspended.',
    default: 'PoweredOn',
  });
}

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

export const LocalObjectReference = Type.Object(
  { name: Name('Name of the referenced object.') },
  { description: 'Reference to an object by name.', 'x-kubernetes-map-type': 'atomic' },
);
export type LocalObjectReference = Static<typeof LocalObjectReference>;

/** A key in a Secret or ConfigMap of the referring object's namespace. */
// Return type inferred on purpose: it carries the static shape.
export function KeySelector(defaultKey: string, what: string) {
  return Type.Object(
    {
      name: Name(`Name of the ${what} in the same namespace.`),
      key: Type.Optional(
        Type.String({ description: `Key within the ${what}.`, default: defaultKey, minLength: 1, maxLength: 253 }),
      ),
    },
    { description: `A key of a ${what} in the same namespace.`, 'x-kubernetes-map-type': 'atomic' },
  );
}
export type KeySelector = Static<ReturnType<typeof KeySelector>>;

export const LabelSelectorRequirement = Type.Object(
  {
    key: Type.String({ description: 'Label key the selector applies to.', minLength: 1, maxLength: 317 }),
    operator: StringEnum(['In', 'NotIn', 'Exists', 'DoesNotExist'] as const, {
      description: 'Relationship of the key to the values: In, NotIn, Exists, DoesNotExist.',
    }),
    values: Type.Optional(
      ListSet(Type.String({ maxLength: 63 }), {
        description: 'Values for In and NotIn; must be empty for Exists and DoesNotExist.',
        maxItems: 64,
      }),
    ),
  },
  {
    description: 'A label selector requirement.',
    'x-kubernetes-validations': [
      {
        rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
        message: 'values must be non-empty for In and NotIn and empty for Exists and DoesNotExist',
        fieldPath: '.values',
      },
    ],
  },
);

export const LabelSelector = Type.Object(
  {
    matchLabels: Type.Optional(StringMap({ description: 'Labels that must all be present with these values.' })),
    matchExpressions: Type.Optional(
      Type.Array(LabelSelectorRequirement, { description: 'Requirements that must all hold.', maxItems: 32 }),
    ),
  },
  {
    description: 'A Kubernetes label selector; an empty selector matches everything.',
    'x-kubernetes-map-type': 'atomic',
  },
);
export type LabelSelector = Static<typeof LabelSelector>;

export const ConditionStatusValues = ['True', 'False', 'Unknown'] as const;

/** metav1.Condition, as CAPI v1beta2 uses it. */
export const Condition = Type.Object(
  {
    type: Type.String({
      description: 'Type of condition in CamelCase, e.g. Ready.',
      minLength: 1,
      maxLength: 316,
      pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    }),
    status: StringEnum(ConditionStatusValues, { description: 'Status of the condition: True, False or Unknown.' }),
    observedGeneration: Type.Optional(
      Type.Integer({ description: 'metadata.generation the condition was computed from.', minimum: 0, format: 'int64' }),
    ),
    lastTransitionTime: Timestamp('Last time the condition changed status.'),
    reason: Type.String({
      description: 'CamelCase reason for the last transition.',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
    }),
    message: Type.String({ description: 'Human-readable details; never contains credentials.', maxLength: 32768 }),
  },
  { description: 'Observation of one aspect of the object.' },
);
export type Condition = Static<typeof Condition>;

export function Conditions(): ReturnType<typeof ListMap<typeof Condition>> {
  return ListMap(Condition, ['type'], {
    description: 'Conditions (CAPI v1beta2 shape), one per type; each writer owns its own types.',
    maxItems: 32,
  });
}

export function ObservedGeneration(): ReturnType<typeof Type.Integer> {
  return Type.Integer({
    description: 'metadata.generation last reconciled successfully.',
    minimum: 0,
    format: 'int64',
  });
}

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
    provisioned: Type.Optional(
      Type.Boolean({ description: 'True once the backend VM exists and is configured (CAPI v1beta2 contract).' }),
    ),
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

// Names that reach a guest. banlieue writes them into cloud-init user-data,
// metadata and netplan, and netplan copies them on into networkd and udev files,
// so the schema holds them to grammars without a character that could end a
// line, a YAML scalar or a shell word: a domain with a newline would add a
// cloud-config key, an interface named `$(reboot)` would reach netplan (issue 10).
// The API server checks an object only when it is written, so the renderers
// check again with the is* predicates below, which accept what older objects
// may hold (upper case, longer interface names) but no other character.

/** DNS-1123 subdomain, as Kubernetes names objects: lower-case alphanumeric labels with inner '-', joined by '.'. */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** DNS-1123 label: one label of a subdomain, as a failure domain name (and its `name` label value) is. */
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** A Linux interface name: at most 15 bytes (IFNAMSIZ with its NUL), no '/', ':' or whitespace, not '.' or '..'. */
export const INTERFACE_NAME_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,14}$';

/** A DNS domain or host name that reaches a guest (search domain, FQDN part). */
export function DnsSubdomain(description: string): ReturnType<typeof Type.String> {
  return Type.String({ description, minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN });
}

/** An interface name the guest is given (netplan `set-name`). */
export function InterfaceName(description: string): ReturnType<typeof Type.String> {
  return Type.String({ description, minLength: 1, maxLength: 15, pattern: INTERFACE_NAME_PATTERN });
}

const DNS_NAME = new RegExp(DNS_SUBDOMAIN_PATTERN, 'i');
const INTERFACE_NAME = new RegExp(INTERFACE_NAME_PATTERN);
const INTERFACE_ID = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const IP_CHARACTERS = /^[0-9a-fA-F.:]+$/;

/** Whether a renderer may write `value` as a DNS name: DNS_SUBDOMAIN_PATTERN in either case, of any length. */
export function isDnsName(value: string): boolean {
  return DNS_NAME.test(value);
}

/** Whether `value` fits INTERFACE_NAME_PATTERN, i.e. the guest can give an interface this name. */
export function isInterfaceName(value: string): boolean {
  return INTERFACE_NAME.test(value);
}

/**
 * Whether a renderer may write `value` where an interface name goes (a netplan ID):
 * INTERFACE_NAME_PATTERN's characters, of any length, since classes written before
 * the pattern allowed 63 characters (such a name is an ID, never a `set-name`).
 */
export function isInterfaceId(value: string): boolean {
  return INTERFACE_ID.test(value);
}

/** Whether `value` is an IPv4 or IPv6 address (node:net isIP) of hex digits, '.' and ':' only: no zone, as the schema's CEL `isIP`. */
export function isIpAddress(value: string): boolean {
  return IP_CHARACTERS.test(value) && isIP(value) !== 0;
}

const IPV4_OR_V6 = 'isIP(self)';

export function IpAddress(description: string): ReturnType<typeof Type.String> {
  return Type.String({
    description,
    maxLength: 45,
    'x-kubernetes-validations': [{ rule: IPV4_OR_V6, message: 'must be an IPv4 or IPv6 address' }],
  });
}

const Nameservers = Type.Array(IpAddress('A DNS server address.'), {
  description: 'DNS servers.',
  maxItems: 8,
});
const Prefix = Type.Integer({ description: 'Prefix length of the address (e.g. 24).', minimum: 0, maximum: 128 });
const Domain = DnsSubdomain('DNS search domain (a DNS-1123 subdomain, e.g. lab.example.com); also the domain of ${FQDN} in user-data.');

// Values that parse but cannot work (issue 15, point 6), refused where a static
// address is written. Each rule holds when a field is no address at all: the
// field's own rule reports that, and ip() would fail on it.
const ADDRESS_NOT_IP = '!isIP(self.address)';
const GATEWAY_NOT_IP = `${ADDRESS_NOT_IP} || !has(self.gateway) || !isIP(self.gateway)`;
const PREFIX_FITS = `(ip(self.address).family() == 4 ? self.prefix <= 32 : self.prefix <= 128)`;
const STATIC_ADDRESS_RULES = [
  {
    rule: `${ADDRESS_NOT_IP} || (!ip(self.address).isUnspecified() && !ip(self.address).isLoopback())`,
    message: 'address must not be an unspecified (0.0.0.0, ::) or loopback (127.0.0.0/8, ::1) address',
    fieldPath: '.address',
  },
  { rule: `${ADDRESS_NOT_IP} || ${PREFIX_FITS}`, message: 'prefix must be at most 32 for an IPv4 address', fieldPath: '.prefix' },
  {
    rule: `${GATEWAY_NOT_IP} || ip(self.gateway).family() == ip(self.address).family()`,
    message: 'gateway must be of the same IP family as address',
    fieldPath: '.gateway',
  },
];

/** A static address assigned to one NIC of one machine. */
export const StaticAddress = Type.Object(
  {
    address: IpAddress('The address, without prefix.'),
    prefix: Prefix,
    gateway: Type.Optional(IpAddress('Default gateway.')),
    nameservers: Type.Optional(Nameservers),
    domain: Type.Optional(Domain),
  },
  { description: 'Static IP configuration of one interface.', 'x-kubernetes-validations': STATIC_ADDRESS_RULES },
);
export type StaticAddress = Static<typeof StaticAddress>;

/** A CAPI IPAM pool (any IPAM provider's kind), as CAPV's and CAPMOX's `addressesFromPools` name one. */
export const IpPoolReference = Type.Object(
  {
    apiGroup: DnsSubdomain('API group of the pool, e.g. ipam.cluster.x-k8s.io.'),
    kind: Type.String({ description: 'Kind of the pool, e.g. InClusterIPPool.', minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' }),
    name: DnsSubdomain('Name of the pool (same namespace, unless the kind is cluster-scoped).'),
  },
  { description: 'A pool an IPAddressClaim is made against.', 'x-kubernetes-map-type': 'atomic' },
);
export type IpPoolReference = Static<typeof IpPoolReference>;

/** Infra NIC addressing: DHCP unless `static` or `addressesFromPools` is set. */
export const Ipam = Type.Object(
  {
    static: Type.Optional(StaticAddress),
    addressesFromPools: Type.Optional(
      Type.Array(IpPoolReference, {
        description:
          'CAPI IPAM pools to take the address from: the provider creates one IPAddressClaim per pool (named <machine>-<nic index>-<pool index>, owned by the machine), waits for its IPAddress and configures it as a static address; the claims go with the machine. One pool per interface for now.',
        minItems: 1,
        maxItems: 1,
      }),
    ),
  },
  {
    description: 'Addressing of the interface; DHCP when neither static nor addressesFromPools is set.',
    'x-kubernetes-validations': [{ rule: '!(has(self.static) && has(self.addressesFromPools))', message: 'static and addressesFromPools are exclusive' }],
  },
);
export type Ipam = Static<typeof Ipam>;

/** VMClass NIC addressing: the per-VM address comes from VirtualMachine.spec.networkOverrides. */
export const ClassIpam = Type.Object(
  {
    mode: StringEnum(['dhcp', 'static'] as const, {
      description: 'dhcp, or static (each VirtualMachine then sets its address in spec.networkOverrides).',
      default: 'dhcp',
    }),
    gateway: Type.Optional(IpAddress('Default gateway for static addresses.')),
    nameservers: Type.Optional(Nameservers),
    domain: Type.Optional(Domain),
  },
  { description: 'Addressing shared by every VM of the class.' },
);

export const MAC_ADDRESS_PATTERN = '^([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}$';
/** MAC_ADDRESS_PATTERN with the group bit (low bit of the first octet) clear (issue 15); a pattern, which costs no CEL budget. */
const UNICAST_MAC_ADDRESS_PATTERN = '^[0-9a-fA-F][02468aAcCeE](:[0-9a-fA-F]{2}){5}$';

export function MacAddress(): ReturnType<typeof Type.String> {
  return Type.String({
    description: 'Fixed unicast MAC address (the first octet even: a multicast address cannot be an interface\'s); generated by the backend when unset.',
    pattern: UNICAST_MAC_ADDRESS_PATTERN,
    // What the pattern allows, said to the CEL cost estimator (rules compare MACs: infra-machine.ts).
    maxLength: 17,
  });
}

/** Exactly one source of PEM CA certificates (ADR-0008 upstream). */
export const CABundleSource = Type.Object(
  {
    inline: Type.Optional(Type.String({ description: 'PEM-encoded CA certificates.', minLength: 1, maxLength: 65536 })),
    configMapRef: Type.Optional(KeySelector('ca.crt', 'ConfigMap')),
    secretRef: Type.Optional(KeySelector('ca.crt', 'Secret')),
  },
  {
    description: 'CA certificates that verify the backend endpoint. Exactly one source.',
    'x-kubernetes-validations': [
      {
        rule: '[has(self.inline), has(self.configMapRef), has(self.secretRef)].filter(x, x).size() == 1',
        message: 'exactly one of inline, configMapRef or secretRef must be set',
      },
    ],
  },
);
export type CABundleSource = Static<typeof CABundleSource>;

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
