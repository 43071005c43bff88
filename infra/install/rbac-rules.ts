// RBAC as data, derived from what each role reads and writes. Least privilege:
// no wildcards, and never list/watch on Secrets (credentials are read by name).
import { CORE_GROUP, INFRA_GROUP, type KindDefinition } from '../api/kind.js';
import { INFRA_CLUSTER_KINDS, INFRA_CLUSTER_TEMPLATE_KINDS, INFRA_MACHINE_KINDS, INFRA_MACHINE_TEMPLATE_KINDS } from '../api/kinds.js';
import { BACKEND_APIS, backendApi, type BackendName } from '../api/backends.js';

export interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
}

export const ALL_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const READ = ['get', 'list', 'watch'];
const STATUS_WRITE = ['get', 'update', 'patch'];

/**
 * `spec.providerID` of an InfraMachine is banlieue's to write: the admission
 * policy admits a new or changed value only from whoever may `update` this
 * virtual subresource `<plural>/providerid` (no API serves it; RBAC and the
 * authorizer still answer for it). The install grants it to the kind's
 * provider role only; cluster admins hold it through their wildcard, which is
 * what `clusterctl move` runs with (ADR 15).
 */
export const PROVIDER_ID_SUBRESOURCE = 'providerid';
export const PROVIDER_ID_VERB = 'update';
export const providerIDResource = (machine: KindDefinition): string => `${machine.plural}/${PROVIDER_ID_SUBRESOURCE}`;

/**
 * A machine's addressesFromPools may name only pools its writer may `get` (ip-pool-policy.ts),
 * unless the writer may `use` this virtual subresource `<plural>/ippools` cluster-wide: CAPI's
 * manager, which clones machines from templates whose authors were checked (it may get no
 * pool itself), and cluster admins. A grant in a namespace does not count.
 */
export const IP_POOLS_SUBRESOURCE = 'ippools';
export const IP_POOLS_VERB = 'use';

const plurals = (kinds: readonly KindDefinition[]): string[] => kinds.map((k) => k.plural);
const statusOf = (kinds: readonly KindDefinition[]): string[] => kinds.filter((k) => k.status).map((k) => `${k.plural}/status`);

const eventRules: PolicyRule[] = [
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];

/**
 * The ClusterRole CAPI's manager aggregates (label
 * cluster.x-k8s.io/aggregate-to-manager): every infrastructure kind and its
 * status, nothing else; and the pools of the machines it clones from templates.
 */
export function capiInfrastructureRules(): PolicyRule[] {
  const kinds = [...INFRA_MACHINE_KINDS, ...INFRA_MACHINE_TEMPLATE_KINDS, ...INFRA_CLUSTER_KINDS, ...INFRA_CLUSTER_TEMPLATE_KINDS];
  return [
    { apiGroups: [INFRA_GROUP], resources: [...plurals(kinds), ...statusOf(kinds)].sort(), verbs: [...ALL_VERBS] },
    { apiGroups: [INFRA_GROUP], resources: INFRA_MACHINE_KINDS.map((k) => `${k.plural}/${IP_POOLS_SUBRESOURCE}`).sort(), verbs: [IP_POOLS_VERB] },
  ];
}

/** banlieue controller: schedules VMs, writes infra machines, aggregates InfraClusters and VMImage readiness, sizes machine templates. */
export function controllerRules(): PolicyRule[] {
  return [
    { apiGroups: [CORE_GROUP], resources: ['virtualmachines'], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: [CORE_GROUP], resources: ['virtualmachines/status', 'vmimages/status'], verbs: STATUS_WRITE },
    // A Provider's Ready=False NoProviderRole while no provider role of its class runs (ADR 30).
    { apiGroups: [CORE_GROUP], resources: ['providers/status'], verbs: STATUS_WRITE },
    { apiGroups: [CORE_GROUP], resources: ['virtualmachines/finalizers'], verbs: ['update'] },
    { apiGroups: [CORE_GROUP], resources: ['providers', 'vmclasses', 'vmimages'], verbs: READ },
    { apiGroups: [INFRA_GROUP], resources: plurals(INFRA_MACHINE_KINDS), verbs: [...ALL_VERBS] },
    { apiGroups: [INFRA_GROUP], resources: plurals(INFRA_CLUSTER_KINDS), verbs: [...READ, 'update', 'patch'] },
    { apiGroups: [INFRA_GROUP], resources: statusOf(INFRA_CLUSTER_KINDS), verbs: STATUS_WRITE },
    // Each *MachineTemplate's status.capacity and nodeInfo (autoscaling from zero), computed from its spec.
    { apiGroups: [INFRA_GROUP], resources: plurals(INFRA_MACHINE_TEMPLATE_KINDS), verbs: READ },
    { apiGroups: [INFRA_GROUP], resources: statusOf(INFRA_MACHINE_TEMPLATE_KINDS), verbs: STATUS_WRITE },
    // User-data: the source Secret/ConfigMap is read by name; the rendered
    // user-data Secret is applied (create+patch) and garbage-collected via its
    // ownerReference. No list/watch: the controller cannot enumerate Secrets.
    // RBAC cannot narrow create/patch by type or name: the always-installed
    // ControllerSecretGuard admits only Secrets of type banlieue.io/user-data,
    // none in kube-* namespaces (ADR 15).
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'patch'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
    // What a host may read: the Role `banlieue host install` makes in its Provider's namespace,
    // listing the Secrets its machines name (host-reads reconciler). Only that Role, by name.
    { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['get', 'update', 'patch'], resourceNames: hostReadsRoleNames() },
    // A CAPI Machine without a failure domain gets one for its infrastructure machine;
    // a Cluster's spec.paused pauses its InfraCluster.
    { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machines'], verbs: ['get'] },
    ...eventRules,
  ];
}

/**
 * A provider role: its Providers, its machine kind (and the right to write its
 * spec.providerID, a virtual subresource the admission policy checks), its
 * VMImage rows. Credentials come from providerCredentialRules, granted
 * cluster-wide or per Provider namespace.
 */
export function providerRules(backend: BackendName): PolicyRule[] {
  const api = backendApi(backend);
  if (!api) throw new Error(`backend "${backend}" has no API entry`);
  const machine = api.machine;
  return [
    { apiGroups: [CORE_GROUP], resources: ['providers', 'vmimages'], verbs: READ },
    { apiGroups: [CORE_GROUP], resources: ['providers/status', 'vmimages/status'], verbs: STATUS_WRITE },
    // Its finalizer on its Providers (a targeted JSON patch): one in use is not deleted first (ADR 19).
    { apiGroups: [CORE_GROUP], resources: ['providers'], verbs: ['patch'] },
    { apiGroups: [INFRA_GROUP], resources: [machine.plural], verbs: [...READ, 'update', 'patch'] },
    { apiGroups: [INFRA_GROUP], resources: [`${machine.plural}/status`], verbs: STATUS_WRITE },
    { apiGroups: [INFRA_GROUP], resources: [`${machine.plural}/finalizers`], verbs: ['update'] },
    { apiGroups: [INFRA_GROUP], resources: [providerIDResource(machine)], verbs: [PROVIDER_ID_VERB] },
    // A CAPI-owned machine takes its failure domain and bootstrap Secret from the owning
    // Machine, and pauses with its Cluster.
    { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'machines'], verbs: ['get'] },
    // Addresses from CAPI IPAM pools (a NIC's addressesFromPools): the machine's claims are
    // created and deleted by name, their IPAddresses read by name; neither is listed or watched.
    // A machine deleted with deletionPolicy Retain keeps its claims: its ownerReference is patched off.
    { apiGroups: ['ipam.cluster.x-k8s.io'], resources: ['ipaddressclaims'], verbs: ['get', 'create', 'patch', 'delete'] },
    { apiGroups: ['ipam.cluster.x-k8s.io'], resources: ['ipaddresses'], verbs: ['get'] },
    ...eventRules,
  ];
}

/** Credentials, CA bundles and bootstrap/user-data of a provider role: by name, never listed. */
export function providerCredentialRules(): PolicyRule[] {
  return [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get'] }];
}

/**
 * The Role whose rules say which Secrets the hosts of a backend that runs on its hosts may read
 * in one namespace: the user-data of the machines still to be created there (ADR 29).
 */
export function hostReadsRoleName(backend: string): string {
  return `banlieue-${backend}-host-reads`;
}

function hostReadsRoleNames(): string[] {
  return BACKEND_APIS.filter((b) => b.providerRuns !== 'cluster').map((b) => hostReadsRoleName(b.name));
}

/** The rules of a host-reads Role: `get` on exactly these Secrets (none: no rule, as an empty resourceNames means every name). */
export function hostReadsRules(secretNames: Iterable<string>): PolicyRule[] {
  const names = [...new Set(secretNames)].sort();
  return names.length === 0 ? [] : [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: names }];
}

/**
 * Leader election, granted in the install namespace only; with `watchAll`, also list and watch
 * there (the controller: whether each provider role's Lease is held, ADR 30).
 */
export function leaderElectionRules(watchAll = false): PolicyRule[] {
  return [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', ...(watchAll ? ['list', 'watch'] : []), 'create', 'update', 'patch'] }];
}

/**
 * A provider that runs on its hosts (Cloud Hypervisor), split by how each host's
 * own identity is bound (docs/adr/0017): `namespaced` through a RoleBinding in
 * its Provider's namespace (its machine kind, Providers read, Events, its Lease;
 * no Secret: those its machines name come from the host-reads Role, ADR 29), `cluster` through a ClusterRoleBinding (VMImages are
 * cluster-scoped), and `ownProvider(name)`, a Role writing the status of its own
 * Provider only. No host may write another host's Provider status.
 */
export function hostProviderRules(backend: BackendName): { namespaced: PolicyRule[]; cluster: PolicyRule[]; ownProvider: (provider: string) => PolicyRule[] } {
  const rules = providerRules(backend);
  const touches = (rule: PolicyRule, resource: string): boolean =>
    rule.apiGroups.includes(CORE_GROUP) && rule.resources.some((r) => r === resource || r.startsWith(`${resource}/`));
  const namespaced = rules
    .filter((rule) => !touches(rule, 'vmimages') && !touches(rule, 'providers'))
    .concat({ apiGroups: [CORE_GROUP], resources: ['providers'], verbs: READ }, ...leaderElectionRules());
  return {
    namespaced,
    cluster: [
      { apiGroups: [CORE_GROUP], resources: ['vmimages'], verbs: READ },
      { apiGroups: [CORE_GROUP], resources: ['vmimages/status'], verbs: STATUS_WRITE },
    ],
    ownProvider: (provider) => [
      { apiGroups: [CORE_GROUP], resources: ['providers/status'], verbs: STATUS_WRITE, resourceNames: [provider] },
      { apiGroups: [CORE_GROUP], resources: ['providers'], verbs: ['patch'], resourceNames: [provider] },
    ],
  };
}
