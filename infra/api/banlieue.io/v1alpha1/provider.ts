import { CABundleSource, Conditions, ObservedGeneration } from '../../meta.js';
import { DNS_LABEL_PATTERN, IpAddress } from '../../names.js';
import { API_VERSION, CORE_GROUP, defineKind, type ObjectOf } from '../../kind.js';
import { ListMap, ListSet, Name, StringEnum, StringMap, Type, type Static } from '../../schema.js';
import { BACKEND_APIS, BACKENDS } from '../../backends.js';
import { providerBackendDescriptions, providerBackendRules, providerSettingsFields } from './backend-rules.js';

export const FEATURES = ['efiSecureBoot', 'vtpm', 'hotAddCPU', 'hotAddMemory', 'nestedVirtualization', 'gpuPassthrough'] as const;
export type Feature = (typeof FEATURES)[number];

// Return type inferred: it carries the element type.
export function Features(description: string) {
  return ListSet(StringEnum(FEATURES), { description, maxItems: FEATURES.length });
}

const ZoneTarget = Type.Object(
  {
    datacenter: Type.Optional(Type.String({ description: 'Datacenter the override applies to: a failure domain whose raw datacenter is this.' })),
    cluster: Type.Optional(
      Type.String({ description: "Cluster the override applies to: a failure domain whose raw cluster is this (what it names is the backend's)." }),
    ),
    target: StringMap({ description: 'Backend target in this zone, e.g. {datastore: ds-fast}.' }),
  },
  { description: 'A per-zone override of the class target.' },
);

const Subnet = Type.Object(
  {
    gateway: Type.Optional(IpAddress('Default gateway of the network.')),
    nameservers: Type.Optional(Type.Array(IpAddress('DNS server.'), { description: 'DNS servers.', maxItems: 8 })),
    domain: Type.Optional(Type.String({ description: 'DNS search domain.', maxLength: 253 })),
  },
  { description: 'Addressing defaults for static addresses on this network.' },
);

// Field descriptions that list backends, from the backend list.
const DESCRIBED = providerBackendDescriptions(BACKEND_APIS);

const classFields = {
  name: Name('Class name, referenced by VMClass disks (storageClass) or interfaces (networkClass).', {
    maxLength: 63,
  }),
  target: Type.Optional(
    StringMap({
      description: DESCRIBED.classTarget,
    }),
  ),
  perZone: Type.Optional(Type.Array(ZoneTarget, { description: 'Per-zone targets; a matching zone wins over target.', maxItems: 64 })),
};

export const StorageClassCapability = Type.Object(classFields, { description: 'A storage class this Provider offers.' });
export const NetworkClassCapability = Type.Object({ ...classFields, subnet: Type.Optional(Subnet) }, { description: 'A network class this Provider offers.' });
export type StorageClassCapability = Static<typeof StorageClassCapability>;
export type NetworkClassCapability = Static<typeof NetworkClassCapability>;

/** The spec fields every Provider has, whatever its backend. */
const PROVIDER_SPEC_FIELDS = {
  providerClassRef: Type.Object(
    {
      name: StringEnum(BACKENDS, { description: DESCRIBED.providerClass }),
    },
    {
      description: 'Which backend this Provider is. Picks the provider role that serves it. Immutable.',
      'x-kubernetes-validations': [{ rule: 'self.name == oldSelf.name', message: 'providerClassRef is immutable' }],
    },
  ),
  connection: Type.Object(
    {
      endpoint: Type.String({
        description: DESCRIBED.endpoint,
        minLength: 1,
        maxLength: 2048,
        'x-kubernetes-validations': [{ rule: "!self.contains('#') && !self.contains(' ')", message: 'endpoint must not contain # or spaces' }],
      }),
      credentialsRef: Type.Optional(Type.Object({ name: Name('Name of a Secret in the Provider namespace.') }, { description: DESCRIBED.credentialsRef })),
      caBundle: Type.Optional(CABundleSource),
      insecureSkipTLSVerify: Type.Optional(
        Type.Boolean({
          description: DESCRIBED.insecureSkipTLSVerify,
          default: false,
        }),
      ),
    },
    { description: 'How to reach the backend.' },
  ),
  capabilities: Type.Optional(
    Type.Object(
      {
        storageClasses: Type.Optional(ListMap(StorageClassCapability, ['name'], { description: 'Storage classes offered.', maxItems: 64 })),
        networkClasses: Type.Optional(ListMap(NetworkClassCapability, ['name'], { description: 'Network classes offered.', maxItems: 64 })),
        features: Type.Optional(Features('Features offered in every failure domain of this Provider.')),
      },
      { description: 'What this Provider offers; verified against the backend and published per failure domain.' },
    ),
  ),
  allowedTargets: Type.Optional(
    ListMap(
      Type.Object(
        {
          kind: Type.String({
            description: DESCRIBED.allowedTargetKind,
            minLength: 1,
            maxLength: 63,
            pattern: '^[a-z][A-Za-z]*$',
          }),
          names: ListSet(Type.String({ minLength: 1, maxLength: 1024 }), {
            description: "Names machines may give a target of this kind; '*' allows any name the Provider's credentials reach.",
            minItems: 1,
            maxItems: 256,
          }),
        },
        { description: 'Backend objects of one kind that machines on this Provider may name.' },
      ),
      ['kind'],
      {
        description:
          "What machines on this Provider may name in their spec beyond what its failure domains (status) and capability classes' targets publish: a machine naming anything else is refused before any backend call (reason TargetNotPublished). Only the Provider's owner may change it.",
        maxItems: 32,
      },
    ),
  ),
  failureDomainNameOverrides: Type.Optional(
    Type.Array(
      Type.Object(
        {
          datacenter: Type.Optional(Type.String({ description: 'Datacenter of the failure domain, on a backend whose failure domains have one.' })),
          cluster: Type.String({ description: 'Cluster, node or host of the failure domain, as its backend names it.' }),
          // Published as it is, never renamed: it is also the failure domain's `name` label value.
          name: Name(
            "Failure domain name to publish instead of the generated one: a DNS label (lower-case letters, digits and inner '-', at most 63 characters).",
            {
              maxLength: 63,
              pattern: DNS_LABEL_PATTERN,
            },
          ),
        },
        { description: 'A failure domain name override.' },
      ),
      { description: 'Names to publish instead of <provider>-<datacenter>-<cluster>.', maxItems: 256 },
    ),
  ),
  paused: Type.Optional(Type.Boolean({ description: 'Stop reconciling this Provider and its machines.', default: false })),
};

export const ProviderSpec = Type.Object(
  { ...PROVIDER_SPEC_FIELDS, ...providerSettingsFields(BACKEND_APIS, Object.keys(PROVIDER_SPEC_FIELDS)) },
  { description: 'Desired state of the Provider.', 'x-kubernetes-validations': providerBackendRules(BACKEND_APIS) },
);

// Whole GiB (memory: MiB in whole GiB) so that a rediscovery of an idle backend writes nothing.
export const StorageCapacity = Type.Object(
  {
    target: Type.String({
      description: 'The backend storage a storage class resolves to here: the value of its target, e.g. a pool or datastore name.',
      minLength: 1,
      maxLength: 253,
    }),
    freeGiB: Type.Integer({ description: 'Free space, rounded down to a whole GiB.', minimum: 0 }),
    capacityGiB: Type.Optional(Type.Integer({ description: 'Total size, rounded down to a whole GiB.', minimum: 0 })),
  },
  { description: 'Free space of one storage target.' },
);
export type StorageCapacity = Static<typeof StorageCapacity>;

export const FailureDomainCapacity = Type.Object(
  {
    cpus: Type.Optional(
      Type.Integer({ description: 'Logical CPUs of the largest host; a VM with more virtual CPUs does not fit. CPUs are shared, not used up.', minimum: 0 }),
    ),
    memoryMiB: Type.Optional(Type.Integer({ description: 'Memory for VMs in total, rounded down to a whole GiB.', minimum: 0 })),
    freeMemoryMiB: Type.Optional(Type.Integer({ description: 'Memory not in use, rounded down to a whole GiB.', minimum: 0 })),
    storage: Type.Optional(ListMap(StorageCapacity, ['target'], { description: 'Free space per storage target.', maxItems: 256 })),
  },
  {
    description:
      'Room for new VMs, read from the backend at each discovery: the scheduler leaves out a failure domain without room for a VM and prefers the one with the most left. A field the backend cannot tell is unset and never keeps a VM out.',
  },
);
export type FailureDomainCapacity = Static<typeof FailureDomainCapacity>;

export const FailureDomainStatus = Type.Object(
  {
    name: Name('Failure domain name, unique across Providers.', { maxLength: 63 }),
    labels: Type.Optional(StringMap({ description: 'Labels matched by failureDomainSelector; always includes name.' })),
    attributes: Type.Optional(
      Type.Object(
        {
          availableStorageClasses: Type.Optional(ListSet(Type.String(), { description: 'Storage classes usable here.', maxItems: 64 })),
          availableNetworkClasses: Type.Optional(ListSet(Type.String(), { description: 'Network classes usable here.', maxItems: 64 })),
          features: Type.Optional(Features('Features available here.')),
          raw: Type.Optional(StringMap({ description: 'Backend placement facts, e.g. datacenter, cluster, node, resourcePool.' })),
        },
        { description: 'What the failure domain offers.' },
      ),
    ),
    capacity: Type.Optional(FailureDomainCapacity),
  },
  { description: 'A failure domain discovered by the provider.' },
);
export type FailureDomainStatus = Static<typeof FailureDomainStatus>;

export const ProviderStatus = Type.Object(
  {
    failureDomains: Type.Optional(
      ListMap(FailureDomainStatus, ['name'], {
        description: 'Failure domains discovered on the backend.',
        maxItems: 256,
      }),
    ),
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
    // A printer column cannot count a list (JSONPath has no length): the count is written beside it.
    failureDomainCount: Type.Optional(
      Type.Integer({ description: 'How many failure domains status.failureDomains lists (the Domains column of kubectl get).', minimum: 0, maximum: 256 }),
    ),
  },
  { description: 'Observed state of the Provider, written by its provider role.' },
);

export const ProviderKind = defineKind({
  group: CORE_GROUP,
  version: API_VERSION,
  kind: 'Provider',
  plural: 'providers',
  shortNames: ['bprov'],
  scope: 'Namespaced',
  categories: ['banlieue'],
  description: DESCRIBED.kind,
  spec: ProviderSpec,
  status: ProviderStatus,
  printerColumns: [
    { name: 'Class', type: 'string', jsonPath: '.spec.providerClassRef.name' },
    { name: 'Endpoint', type: 'string', jsonPath: '.spec.connection.endpoint', priority: 1 },
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
    { name: 'Domains', type: 'integer', jsonPath: '.status.failureDomainCount' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  capiContract: false,
});

export type ProviderSpec = Static<typeof ProviderSpec>;
export type ProviderStatus = Static<typeof ProviderStatus>;
export type Provider = ObjectOf<typeof ProviderKind>;
