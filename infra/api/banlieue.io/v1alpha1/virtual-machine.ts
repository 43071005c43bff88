import {
  Addresses,
  DeletionPolicy,
  DesiredPowerState,
  MachineInitializationStatus,
  ObservedPowerState,
  RestartRequestedAt,
  RestartStatus,
} from '../../machine-fields.js';
import { Conditions, KeySelector, LabelSelector, ObservedGeneration } from '../../meta.js';
import { InterfaceName } from '../../names.js';
import { StaticAddress } from '../../addressing.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP, defineKind, type ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, StringEnum, Timestamp, Type, type Static } from '../../schema.js';
import { BACKEND_APIS, BACKENDS } from '../../backends.js';
import { virtualMachineFolderDescription } from './backend-rules.js';

export const MIGRATION_POLICIES = ['automatic', 'manual', 'never'] as const;
export type MigrationPolicy = (typeof MIGRATION_POLICIES)[number];

export const AntiAffinityTerm = Type.Object(
  {
    topologyKey: Type.String({
      description: 'Failure-domain label whose value must differ from that of every matching VM (e.g. name, datacenter).',
      minLength: 1,
      maxLength: 317,
    }),
    labelSelector: LabelSelector,
    mode: StringEnum(['required', 'preferred'] as const, {
      description: 'required: never share the topology value; preferred: accepted but not enforced yet.',
      default: 'required',
    }),
  },
  { description: 'Keep this VM apart from VMs matching labelSelector in the same namespace.' },
);
export type AntiAffinityTerm = Static<typeof AntiAffinityTerm>;

export const TopologySpreadConstraint = Type.Object(
  {
    maxSkew: Type.Integer({
      description:
        'How many more VMs of the group one topology value may hold than the value holding the fewest, among the failure domains the VM may use. A placement that would exceed it is avoided while another fits (the failure domains are scored, as kube-scheduler does with whenUnsatisfiable ScheduleAnyway); running VMs are never moved for it.',
      minimum: 1,
      maximum: 1000,
    }),
    topologyKey: Type.String({
      description: 'Failure-domain label whose values the group is spread over (name: each failure domain; or e.g. datacenter, hostname).',
      minLength: 1,
      maxLength: 317,
    }),
    labelSelector: LabelSelector,
  },
  {
    description:
      'Spread the VMs of one group (an app: the VirtualMachines of this namespace that labelSelector matches, this one counted when it matches) evenly over the values of topologyKey, like a Pod topologySpreadConstraint.',
  },
);
export type TopologySpreadConstraint = Static<typeof TopologySpreadConstraint>;

const immutableName = (field: string): { rule: string; message: string } => ({
  rule: 'self.name == oldSelf.name',
  message: `${field} is immutable`,
});

export const VirtualMachineSpec = Type.Object(
  {
    classRef: Type.Object(
      { name: Name('Name of a cluster-scoped VMClass.') },
      { description: 'The VMClass giving the shape of the VM. Immutable.', 'x-kubernetes-validations': [immutableName('classRef')] },
    ),
    imageRef: Type.Object(
      { name: Name('Name of a cluster-scoped VMImage.') },
      { description: 'The VMImage to boot. Immutable.', 'x-kubernetes-validations': [immutableName('imageRef')] },
    ),
    placement: Type.Optional(
      Type.Object(
        {
          providerSelector: Type.Optional(LabelSelector),
          failureDomainSelector: Type.Optional(LabelSelector),
          antiAffinity: Type.Optional(Type.Array(AntiAffinityTerm, { description: 'Anti-affinity terms.', maxItems: 8 })),
          topologySpread: Type.Optional(
            Type.Array(TopologySpreadConstraint, { description: 'Spread constraints, scored together (the sum of their skews).', maxItems: 8 }),
          ),
        },
        {
          description:
            'Where the VM may run. providerSelector matches Provider labels in the VM namespace; failureDomainSelector matches failure-domain labels. Empty means anywhere.',
        },
      ),
    ),
    desiredPowerState: Type.Optional(DesiredPowerState()),
    restartRequestedAt: Type.Optional(RestartRequestedAt('VirtualMachine')),
    userData: Type.Optional(
      Type.Object(
        {
          secretRef: Type.Optional(KeySelector('user-data', 'Secret')),
          configMapRef: Type.Optional(KeySelector('user-data', 'ConfigMap')),
        },
        {
          description:
            'Cloud-init (or Ignition) user-data. Placeholders ${VM_NAME}, ${NAMESPACE}, ${FQDN}, ${HOSTNAME}, ${IP}, ${PREFIX}, ${GATEWAY}, ${DNS}, ${DOMAIN} and ${PROVIDER_ID} are rendered; their values are DNS names, IP addresses, numbers or the providerID, and in a #cloud-config a placeholder that is a whole YAML value is written as a double-quoted string.',
          'x-kubernetes-validations': [
            {
              rule: 'has(self.secretRef) != has(self.configMapRef)',
              message: 'exactly one of secretRef or configMapRef must be set',
            },
          ],
        },
      ),
    ),
    migrationPolicy: Type.Optional(
      StringEnum(MIGRATION_POLICIES, {
        description:
          'What to do when the place the VM runs is no longer possible (its Provider is gone or being deleted, its failure domain is gone and its machine reports it unreachable, or spec.placement was changed to exclude it); nothing else moves a running VM. manual (the default): say so in PlacementValid=False and recreate only once annotated banlieue.io/migrate=true. never: keep it where it is. automatic: recreate it elsewhere at once, which destroys the VM and its disks and clones it afresh from its image (at most a few VMs of a namespace per minute).',
        default: 'manual',
      }),
    ),
    deletionPolicy: Type.Optional(DeletionPolicy('VirtualMachine')),
    paused: Type.Optional(Type.Boolean({ description: 'Stop reconciling this VM.', default: false })),
    networkOverrides: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: InterfaceName('Interface name in the VMClass.'),
            static: StaticAddress,
          },
          { description: 'Static address of one class interface.' },
        ),
        ['name'],
        { description: 'Per-VM static addresses, by class interface name.', maxItems: 16 },
      ),
    ),
    hardwareOverride: Type.Optional(
      Type.Object(
        {
          cpus: Type.Optional(Type.Integer({ description: 'Virtual CPUs instead of the class value.', minimum: 1, maximum: 256 })),
          memoryMiB: Type.Optional(Type.Integer({ description: 'Memory in MiB instead of the class value.', minimum: 128, maximum: 4194304 })),
          diskOverrides: Type.Optional(
            ListMap(
              Type.Object(
                {
                  name: Name('Disk name in the VMClass.', { maxLength: 63 }),
                  sizeGiB: SizeGiB('Size in GiB; must not be smaller than the class disk.'),
                },
                { description: 'A larger size for one class disk.' },
              ),
              ['name'],
              { description: 'Disk sizes instead of the class values; disks only grow.', maxItems: 32 },
            ),
          ),
        },
        { description: 'Changes to the class hardware for this VM only.' },
      ),
    ),
    folder: Type.Optional(Type.String({ description: virtualMachineFolderDescription(BACKEND_APIS), maxLength: 1024 })),
  },
  { description: 'Desired state of the VirtualMachine.' },
);

export const ResolvedClass = Type.Object(
  {
    className: Type.String({ description: 'Storage or network class name.' }),
    backendId: Type.String({ description: 'Backend target it resolved to (datastore, bridge, pool, ...).' }),
  },
  { description: 'A class resolved to a backend target.' },
);
export type ResolvedClass = Static<typeof ResolvedClass>;

export const ScheduledPlacement = Type.Object(
  {
    providerName: Name('Provider the VM is placed on.'),
    providerClass: StringEnum(BACKENDS, { description: 'Backend of that Provider.' }),
    failureDomain: Name('Failure domain the VM is placed in.'),
    resolvedStorage: Type.Optional(Type.Array(ResolvedClass, { description: 'Per class disk, in order.', maxItems: 32 })),
    resolvedNetworks: Type.Optional(Type.Array(ResolvedClass, { description: 'Per class interface, in order.', maxItems: 16 })),
    scheduledAt: Type.Optional(Timestamp('When the placement was chosen.')),
  },
  { description: 'The placement the scheduler chose.' },
);
export type ScheduledPlacement = Static<typeof ScheduledPlacement>;

export const VirtualMachineStatus = Type.Object(
  {
    scheduled: Type.Optional(ScheduledPlacement),
    infrastructureRef: Type.Optional(
      Type.Object(
        {
          apiGroup: Type.String({ description: `API group of the infrastructure object (${INFRA_GROUP}).` }),
          kind: Type.String({ description: `Kind of the infrastructure object, e.g. ${BACKEND_APIS[0].machine.kind}.` }),
          name: Name('Name of the infrastructure object (the VM name).'),
        },
        { description: 'The infrastructure object backing this VM.' },
      ),
    ),
    initialization: Type.Optional(MachineInitializationStatus),
    addresses: Type.Optional(Addresses()),
    observedPowerState: Type.Optional(ObservedPowerState()),
    restart: Type.Optional(RestartStatus),
    heldAddresses: Type.Optional(
      Type.Array(
        Type.Object(
          {
            interface: Type.String({ description: 'Class interface name.' }),
            networkClass: Type.String({ description: 'Network class of the interface.' }),
            address: Type.String({ description: 'The static address held.' }),
          },
          { description: 'A static address held by this VM.' },
        ),
        { description: 'Static addresses held by this VM, for duplicate detection.', maxItems: 16 },
      ),
    ),
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
  },
  { description: 'Observed state of the VirtualMachine.' },
);

export const VirtualMachineKind = defineKind({
  group: CORE_GROUP,
  version: API_VERSION,
  kind: 'VirtualMachine',
  plural: 'virtualmachines',
  shortNames: ['bvm'],
  scope: 'Namespaced',
  categories: ['banlieue'],
  description:
    'A VirtualMachine is a backend-agnostic VM: banlieue schedules it onto a Provider and failure domain and creates the backend infrastructure object for it.',
  spec: VirtualMachineSpec,
  status: VirtualMachineStatus,
  // Where it runs and how it is, at a glance; what it is made of with -o wide.
  printerColumns: [
    { name: 'Provider', type: 'string', jsonPath: '.status.scheduled.providerName' },
    { name: 'FailureDomain', type: 'string', jsonPath: '.status.scheduled.failureDomain' },
    { name: 'Power', type: 'string', jsonPath: '.status.observedPowerState' },
    { name: 'IP', type: 'string', jsonPath: '.status.addresses[0].address' },
    { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
    { name: 'Class', type: 'string', jsonPath: '.spec.classRef.name', priority: 1 },
    { name: 'Image', type: 'string', jsonPath: '.spec.imageRef.name', priority: 1 },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  capiContract: false,
});

export type VirtualMachineSpec = Static<typeof VirtualMachineSpec>;
export type VirtualMachineStatus = Static<typeof VirtualMachineStatus>;
export type VirtualMachine = ObjectOf<typeof VirtualMachineKind>;
