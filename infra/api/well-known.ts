// Names other components agree on: field managers, finalizers, labels,
// annotations. Defined once; call sites never spell them.

/** Server-side-apply field managers, one per writer (DESIGN §3). */
export const FieldManager = {
  controller: 'banlieue.io/controller',
  bootstrap: 'banlieue.io/bootstrap',
  provider: (backend: string): string => `banlieue.io/provider-${backend}`,
} as const;

export const Finalizer = {
  virtualMachine: 'banlieue.io/virtualmachine',
  /** Backend finalizer on an InfraMachine, e.g. banlieue.io/vspheremachine. */
  infraMachine: (kind: string): string => `banlieue.io/${kind.toLowerCase()}`,
} as const;

export const Label = {
  name: 'app.kubernetes.io/name',
  component: 'app.kubernetes.io/component',
  partOf: 'app.kubernetes.io/part-of',
  version: 'app.kubernetes.io/version',
  managedBy: 'app.kubernetes.io/managed-by',
  ownedBy: 'banlieue.io/owned-by',
  capiClusterName: 'cluster.x-k8s.io/cluster-name',
  capiAggregateToManager: 'cluster.x-k8s.io/aggregate-to-manager',
} as const;

export const Annotation = {
  migrate: 'banlieue.io/migrate',
  capiPaused: 'cluster.x-k8s.io/paused',
} as const;

export const APP_NAME = 'banlieue';
