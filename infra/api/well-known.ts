// Names other components agree on: field managers, finalizers, labels,
// annotations. Defined once; call sites never spell them.

import { boundedName, OBJECT_NAME_MAX } from './bounded-name.js';

/**
 * The longest field manager the API server takes; also the longest Event
 * reportingController. A Provider's name runs to 253 characters.
 */
const FIELD_MANAGER_MAX = 128;

/** Server-side-apply field managers, one per writer (DESIGN §3). */
export const FieldManager = {
  controller: 'banlieue.io/controller',
  bootstrap: 'banlieue.io/bootstrap',
  /** The day-2 verbs of the CLI (`banlieue vm start|stop|restart`). */
  cli: 'banlieue.io/cli',
  /**
   * A provider role's; with `scope` (`--provider`, one host's role, ADR 17) its own
   * per Provider, so that hosts sharing a namespace never take each other's fields
   * (their VMImage rows, list-map entries of one status).
   */
  provider: (backend: string, scope?: string): string =>
    boundedName(`banlieue.io/provider-${backend}${scope === undefined ? '' : `/${scope}`}`, FIELD_MANAGER_MAX),
} as const;

/**
 * The Lease a provider role leads on: one per backend, or per Provider when scoped to one (a
 * host's own). The controller reads it to tell whether a Provider's class has a role running.
 */
export function providerLeaseName(backend: string, provider?: string): string {
  return boundedName(provider === undefined ? `banlieue-provider-${backend}` : `banlieue-provider-${backend}-${provider}`, OBJECT_NAME_MAX);
}

export const Finalizer = {
  virtualMachine: 'banlieue.io/virtualmachine',
  /** Backend finalizer on an InfraMachine, e.g. banlieue.io/vspheremachine. */
  infraMachine: (kind: string): string => `banlieue.io/${kind.toLowerCase()}`,
  /** On a Provider, by its provider role: it goes only when no machine has a VM on it (docs/adr/0019). */
  providerInUse: 'banlieue.io/provider-in-use',
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
  /** On every object CAPI's topology controller generates for a Cluster of a ClusterClass (kept whatever the class's patches do). */
  capiTopologyOwned: 'topology.cluster.x-k8s.io/owned',
  /** On every object of the install: which clusterctl provider it belongs to (clusterctl provider contract). */
  capiProvider: 'cluster.x-k8s.io/provider',
  /** On the pods of one shard of a role (install prop providerShards): the shard's name, so that each Deployment selects its own. */
  shard: 'banlieue.io/shard',
  /**
   * On the Lease that records which controller shard (`--namespace-selector`) serves a namespace: that
   * namespace's name (ADR 33). Its holderIdentity is the shard's Lease name.
   */
  namespaceClaim: 'banlieue.io/namespace-claim',
} as const;

/** banlieue as clusterctl names it: `infrastructure-<name>`, the value of Label.capiProvider and the repository folder. */
export const CLUSTERCTL_PROVIDER = 'infrastructure-banlieue';

export const Annotation = {
  /** On a VirtualMachine whose migrationPolicy is manual: `true` lets the controller recreate it elsewhere when its placement is impossible. */
  migrate: 'banlieue.io/migrate',
  /** On a VirtualMachine's infrastructure machine: a digest of the VM's spec.placement it was placed for, written by the controller. */
  placementSpec: 'banlieue.io/placement-spec',
  /**
   * On a Provider, by the provider role shard (`--provider-selector`) serving it: that shard's Lease name.
   * A shard claims a Provider it selects that no live shard holds, and lets go once it no longer selects it (ADR 33).
   */
  providerShard: 'banlieue.io/provider-shard',
  capiPaused: 'cluster.x-k8s.io/paused',
  /** Set by CAPI's topology controller on its server-side-apply dry runs; template immutability lets those through. */
  capiTopologyDryRun: 'topology.cluster.x-k8s.io/dry-run',
} as const;

/**
 * Secret types banlieue writes. A Secret's type is immutable, so it marks what
 * the controller made (with its controller ownerReference) more firmly than a
 * label: the controller updates a Secret only when it carries both.
 */
export const SecretType = {
  /** The rendered user-data of a VirtualMachine, `<vm>-user-data`, key `value`. */
  userData: 'banlieue.io/user-data',
} as const;

export const APP_NAME = 'banlieue';
