// What every InfraMachine kind shares (CAPI v1beta2 InfraMachine contract),
// and the *MachineTemplate built from a machine spec.
import {
  Addresses,
  DeletionPolicy,
  DesiredPowerState,
  MachineInitializationStatus,
  ObservedPowerState,
  PROVIDER_ID_IMMUTABLE,
  ProviderID,
  RestartRequestedAt,
  RestartStatus,
} from '../../machine-fields.js';
import { Conditions, KeySelector, LocalObjectReference, ObservedGeneration } from '../../meta.js';
import { API_VERSION, INFRA_GROUP, defineKind, type KindDefinition, type KubeObject, type PrinterColumn } from '../../kind.js';
import { Name, StringEnum, StringMap, Type, type CelRule, type Static, type TSchema, type TObject, type TProperties } from '../../schema.js';

/** Spec fields of every InfraMachine. */
export function machineSpecFields(providerIDScheme: string) {
  return {
    providerRef: Type.Optional(
      Type.Object(LocalObjectReference.properties, {
        description:
          'Provider (same namespace) that runs this machine. When unset, the Provider publishing spec.failureDomain (or the owning CAPI Machine failure domain) is used.',
      }),
    ),
    providerID: Type.Optional(ProviderID(providerIDScheme)),
    failureDomain: Type.Optional(
      Type.String({
        description: 'Failure domain (as published by a Provider) to place the VM in; omit it rather than leave it empty.',
        minLength: 1,
        maxLength: 256,
      }),
    ),
    desiredPowerState: Type.Optional(DesiredPowerState()),
    restartRequestedAt: Type.Optional(RestartRequestedAt('machine')),
    deletionPolicy: Type.Optional(DeletionPolicy('machine')),
    userDataSecretRef: Type.Optional(
      Type.Object(KeySelector('value', 'Secret').properties, {
        description:
          'Secret (same namespace) holding the rendered user-data. When unset on a CAPI-owned machine, the owning Machine spec.bootstrap.dataSecretName is used.',
      }),
    ),
  };
}

/**
 * Where a machine's VM was created, recorded by the provider role before it asks the backend
 * to create anything. From then on the VM is looked for, converged and deleted there, whatever
 * spec.providerRef, spec.failureDomain or the owning CAPI Machine say later
 * (docs/adr/0019-machines-stay-where-created.md). Status, not spec: `clusterctl move` drops it,
 * and the moved machine's spec (which admission kept equal to it) places it again.
 */
export const MachinePlacementRecord = Type.Object(
  {
    provider: Name('Provider (same namespace) the VM was created on.'),
    failureDomain: Type.String({ description: 'Failure domain the VM was created in.', maxLength: 256 }),
    location: Type.Optional(
      StringMap({
        description:
          "The failure domain's backend placement facts when the VM was created (its attributes.raw): the VM is found there even after the Provider stops publishing that failure domain.",
      }),
    ),
  },
  { description: 'Where the VM was created; it is looked for and deleted there.' },
);
export type MachinePlacementRecord = Static<typeof MachinePlacementRecord>;

/** Status fields of every InfraMachine. */
export const machineStatusFields = {
  initialization: Type.Optional(MachineInitializationStatus),
  addresses: Type.Optional(Addresses()),
  failureDomain: Type.Optional(Type.String({ description: 'Failure domain the VM runs in.' })),
  observedPowerState: Type.Optional(ObservedPowerState()),
  taskRef: Type.Optional(
    Type.String({
      description:
        "Backend task creating the VM (the backend's own reference to it), started by an earlier pass; the provider picks up its result and clears it.",
      maxLength: 256,
    }),
  ),
  placement: Type.Optional(MachinePlacementRecord),
  restart: Type.Optional(RestartStatus),
  conditions: Type.Optional(Conditions()),
  observedGeneration: Type.Optional(ObservedGeneration()),
};

/**
 * Once a machine records where its VM is (status.placement), its spec may not name another
 * Provider or failure domain: VMs are not moved, and a machine that pointed elsewhere would
 * look for (and delete) its VM where it is not. A value may stay as it was, or name
 * the recorded place; anything else is refused. Before the record, a machine that is already
 * provisioned (recorded by no older version) keeps both fields as they are. Every other update
 * (CAPI's labels, finalizers, the VirtualMachine controller's applies) leaves them as they were
 * and passes. `clusterctl move` creates the machine anew (no oldSelf): nothing is refused there.
 */
export const PLACEMENT_IMMUTABLE = (() => {
  const provider = (o: string): string => `(has(${o}.spec.providerRef) ? ${o}.spec.providerRef.name : '')`;
  const domain = (o: string): string => `(has(${o}.spec.failureDomain) ? ${o}.spec.failureDomain : '')`;
  const recorded = 'oldSelf.status.placement';
  const provisioned = 'has(oldSelf.status.initialization) && has(oldSelf.status.initialization.provisioned) && oldSelf.status.initialization.provisioned';
  const sameAsBefore = `${provider('self')} == ${provider('oldSelf')} && ${domain('self')} == ${domain('oldSelf')}`;
  const keptOrRecorded =
    `(${provider('self')} == ${provider('oldSelf')} || ${provider('self')} == ${recorded}.provider) && ` +
    `(${domain('self')} == ${domain('oldSelf')} || ${domain('self')} == ${recorded}.failureDomain)`;
  return {
    rule: `!has(oldSelf.status) || (has(${recorded}) ? (${keptOrRecorded}) : (!(${provisioned}) || (${sameAsBefore})))`,
    message:
      'spec.providerRef and spec.failureDomain cannot name another place once the VM was created (status.placement): a VM is not moved; delete this machine to replace it elsewhere',
  } as const;
})();

export function machineSpecValidations(): { 'x-kubernetes-validations': readonly (typeof PROVIDER_ID_IMMUTABLE)[] } {
  return { 'x-kubernetes-validations': [PROVIDER_ID_IMMUTABLE] };
}

const machineColumns = (extra: readonly PrinterColumn[]): PrinterColumn[] => [
  { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']" },
  // The CAPI Machine that owns it, as CAPV and CAPMOX show theirs.
  { name: 'Machine', type: 'string', jsonPath: ".metadata.ownerReferences[?(@.kind=='Machine')].name" },
  { name: 'Provider', type: 'string', jsonPath: '.spec.providerRef.name' },
  { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID' },
  { name: 'Power', type: 'string', jsonPath: '.status.observedPowerState' },
  { name: 'IP', type: 'string', jsonPath: '.status.addresses[0].address' },
  { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
  { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
  { name: 'Provisioned', type: 'boolean', jsonPath: '.status.initialization.provisioned', priority: 1 },
  ...extra,
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** Template metadata CAPI copies onto the machines it clones. */
export const TemplateMetadata = Type.Object(
  {
    labels: Type.Optional(StringMap({ description: 'Labels to set on cloned objects.' })),
    annotations: Type.Optional(StringMap({ description: 'Annotations to set on cloned objects.' })),
  },
  { description: 'Metadata of the objects cloned from this template.' },
);

/** CPU architectures the CAPI autoscale-from-zero contract names (Kubernetes GOARCH values). */
export const NODE_ARCHITECTURES = ['amd64', 'arm64', 's390x', 'ppc64le'] as const;
export type NodeArchitecture = (typeof NODE_ARCHITECTURES)[number];

/**
 * What every *MachineTemplate reports: the Node one machine of it becomes, so the
 * cluster-autoscaler can scale a MachineDeployment from zero (CAPI InfraMachineTemplate
 * contract, "support cluster autoscaling from zero"). The controller computes it from
 * spec.template.spec.
 */
export const MachineTemplateStatus = Type.Object(
  {
    capacity: Type.Optional(
      StringMap({
        description:
          'Resources of one machine, as a Node reports them (resource name to quantity string, e.g. cpu: "2", memory: 4096Mi). Quantities are strings: the autoscaler reads them as a string map.',
      }),
    ),
    nodeInfo: Type.Optional(
      Type.Object(
        {
          architecture: Type.Optional(StringEnum(NODE_ARCHITECTURES, { description: 'CPU architecture of the machines.' })),
          operatingSystem: Type.Optional(Type.String({ description: 'Operating system of the machines, e.g. linux.', maxLength: 63 })),
        },
        { description: 'Architecture and operating system of the machines.', minProperties: 1 },
      ),
    ),
  },
  { description: 'Observed state of the template: the capacity of the machines cloned from it.' },
);
export type MachineTemplateStatus = Static<typeof MachineTemplateStatus>;

type Validation = { readonly rule: string; readonly message: string };

/**
 * `spec.template.{metadata,spec}`; `rules` add checks on the whole template.
 * Immutable as CAPI expects of templates, but not here: the admission policy in
 * infra/install/template-immutability.ts enforces it, because it must let
 * CAPI's topology dry run through and a CRD rule cannot tell that apart.
 */
export function templateSpec<S extends TSchema>(kind: string, spec: S, rules: readonly Validation[] = []) {
  return Type.Object(
    {
      template: Type.Object({ metadata: Type.Optional(TemplateMetadata), spec }, { description: `Template of the ${kind} objects cloned from it.` }),
    },
    {
      description: `Desired state of the ${kind}Template. Immutable: create a new template to change machines.`,
      ...(rules.length > 0 ? { 'x-kubernetes-validations': [...rules] } : {}),
    },
  );
}

interface MachineKindsInput<Spec extends TObject<TProperties>, Status extends TObject<TProperties>> {
  readonly kind: string;
  readonly shortName: string;
  readonly backend: string;
  readonly spec: Spec;
  readonly status: Status;
  readonly extraColumns?: readonly PrinterColumn[];
  /** The spec's list of NICs (`network` or `nics`), if it has one: a template may fix neither MACs nor static IPs in it. */
  readonly nicsField?: string;
  /** What the machine's spec may no longer change once its VM was created (fixed-once-created.ts). @default none */
  readonly fixedOnceCreated?: readonly CelRule[];
  /** The backend's hard limit on the VM name the machine's name becomes, and why. @default none (a Kubernetes name fits) */
  readonly nameLimit?: MachineNameLimit;
}

/** A backend's longest VM name, when a machine's metadata.name (the VM's name) may be longer. */
export interface MachineNameLimit {
  readonly maxLength: number;
  /** Who refuses a longer name, e.g. `vCenter`. */
  readonly refusedBy: string;
}

/**
 * A machine named beyond its backend's limit is refused at admission, naming the field,
 * rather than accepted and refused by the provider. Machines only: CAPI names
 * those it clones from a template, and a VirtualMachine is not bound to one backend (the
 * provider refuses it there: CreateRefused).
 */
function nameWithin(limit: MachineNameLimit): CelRule {
  return {
    rule: `self.metadata.name.size() <= ${limit.maxLength}`,
    message: `metadata.name must be at most ${limit.maxLength} characters: ${limit.refusedBy} takes VM names of at most ${limit.maxLength} characters`,
  };
}

/**
 * What a machine template may not carry: every machine cloned from it would
 * get the same value, and so claim one VM or one address (tenant isolation).
 */
function templateRules(nicsField: string | undefined): Validation[] {
  const providerID = {
    rule: '!has(self.template.spec.providerID)',
    message: 'a machine template may not set providerID: the provider writes it for each machine',
  };
  if (nicsField === undefined) return [providerID];
  const nics = `self.template.spec.${nicsField}`;
  return [
    providerID,
    {
      rule: `!has(${nics}) || ${nics}.all(n, !has(n.macAddress) && (!has(n.ipam) || !has(n.ipam.static)))`,
      message: `a machine template may not fix MAC addresses or static IPs in ${nicsField}: every machine cloned from it would get the same`,
    },
  ];
}

/**
 * Two interfaces of one VM with one MAC: refused on the machine, whose own rule
 * sees the whole list; MACs shared between machines are reported by the provider
 * (controller/reconcilers/infra-machine/mac-addresses.ts).
 */
function distinctMacs(nicsField: string): CelRule {
  const nics = `self.spec.${nicsField}`;
  return {
    rule: `!has(${nics}) || ${nics}.all(n, !has(n.macAddress) || ${nics}.exists_one(m, has(m.macAddress) && m.macAddress.lowerAscii() == n.macAddress.lowerAscii()))`,
    message: `two interfaces in spec.${nicsField} have the same macAddress: each interface of a VM needs its own`,
    fieldPath: `.spec.${nicsField}`,
  };
}

/** The machine kind and its template kind. */
export function defineMachineKinds<Spec extends TObject<TProperties>, Status extends TObject<TProperties>>(input: MachineKindsInput<Spec, Status>) {
  const lower = input.kind.toLowerCase();
  const machine = defineKind({
    group: INFRA_GROUP,
    version: API_VERSION,
    kind: input.kind,
    plural: `${lower}s`,
    shortNames: [input.shortName],
    scope: 'Namespaced',
    categories: ['banlieue', 'cluster-api'],
    description: `A ${input.kind} is one ${input.backend} VM. banlieue writes it for a VirtualMachine; Cluster API clones it from a ${input.kind}Template for a Machine (v1beta2 InfraMachine contract).`,
    spec: input.spec,
    status: input.status,
    printerColumns: machineColumns(input.extraColumns ?? []),
    capiContract: true,
    rootValidations: [
      PLACEMENT_IMMUTABLE,
      ...(input.nicsField !== undefined ? [distinctMacs(input.nicsField)] : []),
      ...(input.fixedOnceCreated ?? []),
      ...(input.nameLimit ? [nameWithin(input.nameLimit)] : []),
    ],
  });
  const template = defineKind({
    group: INFRA_GROUP,
    version: API_VERSION,
    kind: `${input.kind}Template`,
    plural: `${lower}templates`,
    shortNames: [`${input.shortName}t`],
    scope: 'Namespaced',
    categories: ['banlieue', 'cluster-api'],
    description: `A ${input.kind}Template is the ${input.kind} shape Cluster API clones for each Machine of a MachineDeployment or control plane.`,
    spec: templateSpec(input.kind, input.spec, templateRules(input.nicsField)),
    status: MachineTemplateStatus,
    printerColumns: [
      { name: 'CPU', type: 'string', jsonPath: '.status.capacity.cpu' },
      { name: 'Memory', type: 'string', jsonPath: '.status.capacity.memory' },
      { name: 'Arch', type: 'string', jsonPath: '.status.nodeInfo.architecture', priority: 1 },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    capiContract: true,
  });
  return { machine, template } satisfies Record<string, KindDefinition>;
}

/** The InfraMachine contract fields, once: what every reconciler, mirror and builder reads. */
export const InfraMachineContractSpec = Type.Object(machineSpecFields('<scheme>://<UUID>'));
export const InfraMachineContractStatus = Type.Object(machineStatusFields);
export type InfraMachineContractSpec = Static<typeof InfraMachineContractSpec>;
export type InfraMachineContractStatus = Static<typeof InfraMachineContractStatus>;

/**
 * Any InfraMachine kind as the generic code sees it: the contract fields typed,
 * the backend's own spec fields in `Spec` (the contract ones when unknown).
 */
export type InfraMachine<Spec extends InfraMachineContractSpec = InfraMachineContractSpec> = KubeObject<
  Spec,
  InfraMachineContractStatus & Record<string, unknown>
>;
