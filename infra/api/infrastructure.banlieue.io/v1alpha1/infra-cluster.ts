// The InfraCluster kinds (CAPI v1beta2 InfraCluster contract). All four
// backends share one shape and one reconciler: a cluster aggregates the
// failure domains its Providers publish; it never talks to a backend.
import { ApiEndpoint, ClusterFailureDomain } from '../../machine-fields.js';
import { Conditions, LabelSelector, LocalObjectReference, ObservedGeneration } from '../../meta.js';
import { API_VERSION, INFRA_GROUP, defineKind, type KubeObject } from '../../kind.js';
import { ListMap, Type, type Static } from '../../schema.js';
import { templateSpec } from './infra-machine.js';

// Read by both spec schemas: TypeBox types a schema's description as optional.
const SPEC_DESCRIPTION = 'Desired state of the cluster infrastructure.';

export const InfraClusterSpec = Type.Object(
  {
    controlPlaneEndpoint: Type.Optional(
      Type.Object(ApiEndpoint.properties, {
        description: 'Endpoint of the workload cluster API server; CAPI copies it to the Cluster. Can be neither changed nor removed once set.',
      }),
    ),
    providerRefs: Type.Optional(
      ListMap(LocalObjectReference, ['name'], {
        description: 'Providers (same namespace) whose failure domains this cluster uses. Wins over providerSelector when non-empty.',
        maxItems: 32,
      }),
    ),
    providerSelector: Type.Optional(LabelSelector),
    controlPlaneFailureDomainSelector: Type.Optional(LabelSelector),
    paused: Type.Optional(Type.Boolean({ description: 'Stop reconciling this cluster.', default: false })),
  },
  { description: SPEC_DESCRIPTION },
);

export const InfraClusterStatus = Type.Object(
  {
    initialization: Type.Optional(
      Type.Object(
        { provisioned: Type.Optional(Type.Boolean({ description: 'True once the failure domains are published (CAPI contract).' })) },
        { description: 'Initialization progress (CAPI v1beta2 contract).' },
      ),
    ),
    controlPlaneEndpoint: Type.Optional(ApiEndpoint),
    failureDomains: Type.Optional(
      ListMap(ClusterFailureDomain, ['name'], {
        description: 'Failure domains of the selected Providers (CAPI v1beta2 list shape).',
        maxItems: 100,
      }),
    ),
    conditions: Type.Optional(Conditions()),
    observedGeneration: Type.Optional(ObservedGeneration()),
  },
  { description: 'Observed state of the cluster infrastructure.' },
);

/**
 * On an InfraCluster's spec: once set, controlPlaneEndpoint stays as it is, neither changed
 * nor removed (CAPI copies it to the Cluster once, and a rule on the field itself never sees
 * its removal: CEL runs a transition rule only where old and new values both exist). Not on
 * the template kind, whose whole spec has its own immutability.
 */
export const CONTROL_PLANE_ENDPOINT_IMMUTABLE = {
  rule: '!has(oldSelf.controlPlaneEndpoint) || (has(self.controlPlaneEndpoint) && self.controlPlaneEndpoint == oldSelf.controlPlaneEndpoint)',
  message: 'controlPlaneEndpoint is immutable once set: it can be neither changed nor removed',
  fieldPath: '.controlPlaneEndpoint',
} as const;

/** The InfraCluster kinds' spec: the shared fields, and the rules on their updates. */
const InfraClusterKindSpec = Type.Object(InfraClusterSpec.properties, {
  description: SPEC_DESCRIPTION,
  'x-kubernetes-validations': [CONTROL_PLANE_ENDPOINT_IMMUTABLE],
});

/** A backend's InfraCluster kind and its template kind (shared shape, one reconciler). */
export function defineClusterKinds(prefix: string, shortName: string, backend: string) {
  const kind = `${prefix}Cluster`;
  const lower = kind.toLowerCase();
  const cluster = defineKind({
    group: INFRA_GROUP,
    version: API_VERSION,
    kind,
    plural: `${lower}s`,
    shortNames: [shortName],
    scope: 'Namespaced',
    categories: ['banlieue', 'cluster-api'],
    description: `A ${kind} is the ${backend} infrastructure of a Cluster API Cluster: it publishes the failure domains of one or more Providers (v1beta2 InfraCluster contract).`,
    spec: InfraClusterKindSpec,
    status: InfraClusterStatus,
    printerColumns: [
      { name: 'Cluster', type: 'string', jsonPath: ".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']" },
      { name: 'Provisioned', type: 'boolean', jsonPath: '.status.initialization.provisioned' },
      { name: 'Endpoint', type: 'string', jsonPath: '.spec.controlPlaneEndpoint.host', priority: 1 },
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    capiContract: true,
  });
  const template = defineKind({
    group: INFRA_GROUP,
    version: API_VERSION,
    kind: `${kind}Template`,
    plural: `${lower}templates`,
    shortNames: [`${shortName}t`],
    scope: 'Namespaced',
    categories: ['banlieue', 'cluster-api'],
    description: `A ${kind}Template is the ${kind} shape a ClusterClass clones for each Cluster.`,
    spec: templateSpec(kind, InfraClusterSpec),
    status: undefined,
    printerColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
    capiContract: true,
  });
  return { cluster, template };
}

export type InfraClusterSpec = Static<typeof InfraClusterSpec>;
export type InfraClusterStatus = Static<typeof InfraClusterStatus>;
export type InfraCluster = KubeObject<InfraClusterSpec, InfraClusterStatus>;
