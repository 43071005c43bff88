import { isIP } from 'node:net';
import { BACKEND_APIS, BACKENDS, type BackendName } from '../api/backends.js';
import { parseSelector } from '../api/label-syntax.js';
import { RELEASE_TAG } from '../version.js';

export const DEFAULT_NAMESPACE = 'banlieue-system';
export const DEFAULT_REGISTRY = 'ghcr.io/banlieue';

/** Backends whose provider runs in the management cluster; Cloud Hypervisor's runs on its hosts. */
export const CLUSTER_SIDE_BACKENDS: readonly BackendName[] = BACKEND_APIS.filter((b) => b.providerRuns === 'cluster').map((b) => b.name);

/**
 * Backends whose provider role this version runs (`banlieue provider <backend>`).
 * The others get no ServiceAccount, RBAC or Deployment at all (an identity
 * nobody uses is one more credential to steal) until their role is built (a
 * unit test keeps this list and the controller's backend registry equal).
 */
export const PROVIDER_ROLES_BUILT: readonly BackendName[] = BACKEND_APIS.filter((b) => b.providerRoleBuilt).map((b) => b.name);

export interface BanlieueInstallProps {
  /**
   * Namespace of the controller and provider workloads.
   * @default banlieue-system
   */
  readonly namespace?: string;
  /**
   * Image registry; the image is `<registry>/banlieue:<version>`.
   * @default ghcr.io/banlieue
   */
  readonly registry?: string;
  /**
   * Image tag.
   * @default v<package version>
   */
  readonly version?: string;
  /**
   * Backends to install a provider for.
   * @default all four
   */
  readonly backends?: readonly BackendName[];
  /**
   * Add the ValidatingAdmissionPolicies that keep tenants from using banlieue
   * as a deputy (Kubernetes 1.30+): a reference to a Secret or ConfigMap
   * (credentials, CA bundle, user-data, CAPI bootstrap data) is admitted only
   * when the requester may `get` it, `insecureSkipTLSVerify` only in
   * namespaces labelled `banlieue.io/allow-insecure-tls=true`, and
   * `spec.providerID` only from the provider role (docs/adr/0015).
   *
   * Opting out (`false`) is a risk: anyone who may create a Provider, a
   * VirtualMachine or a machine in a namespace can then have banlieue send a
   * Secret of that namespace they cannot read to a VM or to an endpoint they
   * run, and can point a machine at any VM's providerID. Only opt out on
   * clusters whose every namespace user may read every Secret there.
   * The guard on the controller's own Secret writes is installed either way.
   * @default true
   */
  readonly admissionPolicies?: boolean;
  /**
   * Add NetworkPolicies for the banlieue pods.
   * @default false
   */
  readonly networkPolicies?: boolean;
  /**
   * Where the NetworkPolicies (`networkPolicies`) let the banlieue pods connect
   * besides DNS. Unset, the pods reach any address on the API server's and the
   * backends' ports: whoever may write a Provider's endpoint then has the
   * provider pods dial any host on those ports (an internal service, another
   * tenant's host). Set both lists to the addresses your backends and API
   * server have.
   * @default any address on those ports
   */
  readonly networkPolicyEgress?: NetworkPolicyEgress;
  /**
   * Namespaces where Providers (and so their credential Secrets, CA bundles
   * and machines' user-data) live. When set, each provider role may `get`
   * Secrets and ConfigMaps only there (a Role and RoleBinding per namespace);
   * a Provider or machine elsewhere cannot be served. Unset: every namespace
   * (a ClusterRole), for clusters where tenants run their own Providers.
   * @default every namespace
   */
  readonly providerNamespaces?: readonly string[];
  /**
   * Serve `/metrics` on the pod IP (`--metrics-bind-address=0.0.0.0`) so
   * Prometheus can scrape it. The endpoint has no authentication: anyone who
   * reaches the pod reads it, so pair it with `networkPolicies`, which then
   * admit the metrics port only from namespaces labelled
   * `banlieue.io/monitoring=true`. Off: metrics listen on 127.0.0.1 only
   * (`kubectl port-forward` or a sidecar reads them). Exposed, each role
   * also gets a Service `<role>-metrics` (port `metrics`) for Prometheus to
   * find its pods by (docs/metrics.md).
   * @default false
   */
  readonly exposeMetrics?: boolean;
  /**
   * Add a Prometheus Operator ServiceMonitor per role, selecting its metrics
   * Service (needs `exposeMetrics`). Off by default because applying it needs
   * the ServiceMonitor CRD (`monitoring.coreos.com/v1`), which a cluster
   * without the Prometheus Operator lacks.
   * @default false
   */
  readonly serviceMonitor?: boolean;
  /**
   * Seconds a Deployment of the install may go without progress before its
   * rollout is reported failed (its `progressDeadlineSeconds`: the
   * `Progressing` condition turns False with reason ProgressDeadlineExceeded,
   * which `banlieue bootstrap operator --wait` reports).
   * @default 600
   */
  readonly progressDeadlineSeconds?: number;
  /**
   * Provider role shards: for a backend listed here, one Deployment per shard instead of one for the
   * backend, each serving the Providers of that backend whose labels match its `providerSelector`
   * and leading on a Lease of its own (`banlieue provider <backend> --provider-selector`, ADR 33).
   * A Provider relabelled from one shard's selector to another's is handed over; one that no shard's
   * selector matches is served by none. The shards of a backend share its ServiceAccount and RBAC.
   * @default none: one Deployment per backend, serving every Provider of it
   */
  readonly providerShards?: readonly ProviderShard[];
}

/** One provider Deployment of a backend, serving a group of its Providers. */
export interface ProviderShard {
  /** A backend of the install whose provider runs in the cluster. */
  readonly backend: BackendName;
  /** A DNS label, unique among the backend's shards: the Deployment is `banlieue-provider-<backend>-<name>`. */
  readonly name: string;
  /** The Providers it serves, by label, in kubectl's `-l` syntax: `vcenter-group=eu`, `region in (eu,us)`. */
  readonly providerSelector: string;
}

/** Destinations of the banlieue pods' connections, as CIDRs (`10.20.0.0/16`, `fd00:20::/64`, `172.18.0.2/32`). */
export interface NetworkPolicyEgress {
  /**
   * The API server, on 443 and 6443, as the pods reach it after its Service's
   * NAT: the addresses of `kubectl get endpointslices -n default -l
   * kubernetes.io/service-name=kubernetes`, not the Service's cluster IP.
   * @default any address
   */
  readonly apiServer?: readonly string[];
  /**
   * The backends (vCenters, Proxmox nodes, libvirt hosts) on the ports their
   * providers dial. Needs `apiServer` too: a backend's port may be the API
   * server's 443, which the API server's rule would otherwise leave open.
   * @default any address
   */
  readonly backends?: readonly string[];
}

export interface ResolvedInstallProps extends Required<Omit<BanlieueInstallProps, 'providerNamespaces'>> {
  /** undefined: every namespace. */
  readonly providerNamespaces: readonly string[] | undefined;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const REGISTRY = /^[a-z0-9]+([._:-][a-z0-9]+)*(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

/** Defaults applied, every prop checked; a bad prop throws naming prop and value. */
export function resolveInstallProps(props: BanlieueInstallProps = {}): ResolvedInstallProps {
  const resolved: ResolvedInstallProps = {
    namespace: props.namespace ?? DEFAULT_NAMESPACE,
    registry: props.registry ?? DEFAULT_REGISTRY,
    version: props.version ?? RELEASE_TAG,
    backends: props.backends ?? BACKENDS,
    admissionPolicies: props.admissionPolicies ?? true,
    networkPolicies: props.networkPolicies ?? false,
    networkPolicyEgress: props.networkPolicyEgress ?? {},
    providerNamespaces: props.providerNamespaces,
    ...resolveMetrics(props),
    progressDeadlineSeconds: props.progressDeadlineSeconds ?? 600,
    providerShards: props.providerShards ?? [],
  };
  if (!DNS_LABEL.test(resolved.namespace)) {
    throw new Error(`namespace "${resolved.namespace}" is not a valid namespace name (DNS-1123 label)`);
  }
  if (!REGISTRY.test(resolved.registry)) throw new Error(`registry "${resolved.registry}" is not a valid image registry path`);
  if (!TAG.test(resolved.version)) throw new Error(`version "${resolved.version}" is not a valid image tag`);
  for (const b of resolved.backends) {
    if (!(BACKENDS as readonly string[]).includes(b)) {
      throw new Error(`backends: "${b}" is not a backend (one of ${BACKENDS.join(', ')})`);
    }
  }
  if (new Set(resolved.backends).size !== resolved.backends.length) {
    throw new Error(`backends: "${resolved.backends.join(',')}" lists a backend twice`);
  }
  if (!Number.isInteger(resolved.progressDeadlineSeconds) || resolved.progressDeadlineSeconds < 1) {
    throw new Error(`progressDeadlineSeconds: "${resolved.progressDeadlineSeconds}" is not a whole number of seconds of at least 1`);
  }
  checkProviderNamespaces(resolved.providerNamespaces);
  checkNetworkPolicyEgress(resolved.networkPolicyEgress);
  checkProviderShards(resolved);
  return resolved;
}

/** Each shard of an installed cluster-side backend, named once, its selector valid and its own (a selector is its Lease). */
function checkProviderShards({ providerShards, backends }: Pick<ResolvedInstallProps, 'providerShards' | 'backends'>): void {
  const seen = new Set<string>();
  providerShards.forEach((shard, i) => {
    const field = `providerShards[${i}]`;
    if (!backends.includes(shard.backend) || !CLUSTER_SIDE_BACKENDS.includes(shard.backend))
      throw new Error(
        `${field}.backend: "${shard.backend}" is not a backend of the install whose provider runs in the cluster (${backends.filter((b) => CLUSTER_SIDE_BACKENDS.includes(b)).join(', ')})`,
      );
    if (!DNS_LABEL.test(shard.name)) throw new Error(`${field}.name: "${shard.name}" is not a DNS-1123 label`);
    let selector: string;
    try {
      selector = JSON.stringify(parseSelector(shard.providerSelector));
    } catch (err) {
      throw new Error(`${field}.providerSelector: ${(err as Error).message}`);
    }
    for (const [what, key] of [
      ['name', `${shard.backend} name ${shard.name}`],
      ['providerSelector', `${shard.backend} selector ${selector}`],
    ] as const) {
      if (seen.has(key)) throw new Error(`${field}.${what}: another ${shard.backend} shard has the same ${what}`);
      seen.add(key);
    }
  });
}

/** exposeMetrics and serviceMonitor, defaulted; a ServiceMonitor needs metrics exposed. */
function resolveMetrics(props: BanlieueInstallProps): Pick<ResolvedInstallProps, 'exposeMetrics' | 'serviceMonitor'> {
  const resolved = { exposeMetrics: props.exposeMetrics ?? false, serviceMonitor: props.serviceMonitor ?? false };
  if (resolved.serviceMonitor && !resolved.exposeMetrics) {
    throw new Error('serviceMonitor needs exposeMetrics: without it /metrics listens on loopback only, where no Prometheus can scrape it');
  }
  return resolved;
}

function checkNetworkPolicyEgress(egress: NetworkPolicyEgress): void {
  for (const [field, cidrs] of Object.entries(egress) as [keyof NetworkPolicyEgress, readonly string[] | undefined][]) {
    if (cidrs === undefined) continue;
    if (cidrs.length === 0) throw new Error(`networkPolicyEgress.${field}: an empty list lets the pods reach nothing there; omit it for any address`);
    for (const cidr of cidrs) {
      if (!isCidr(cidr))
        throw new Error(`networkPolicyEgress.${field}: "${cidr}" is not a CIDR (an IPv4 or IPv6 address and a prefix length, e.g. 10.20.0.0/16)`);
    }
  }
  if (egress.backends !== undefined && egress.apiServer === undefined) {
    throw new Error(
      "networkPolicyEgress.backends needs networkPolicyEgress.apiServer too: the API server's rule, open to any address, would leave its ports (443 is a backend's too) open to every host",
    );
  }
}

function isCidr(value: string): boolean {
  const [address = '', prefix, ...rest] = value.split('/');
  if (prefix === undefined || rest.length > 0 || !/^\d{1,3}$/.test(prefix)) return false;
  const bits = isIP(address) === 4 ? 32 : isIP(address) === 6 ? 128 : 0;
  return bits > 0 && Number(prefix) <= bits;
}

function checkProviderNamespaces(namespaces: readonly string[] | undefined): void {
  if (namespaces === undefined) return;
  if (namespaces.length === 0) {
    throw new Error('providerNamespaces: an empty list leaves the providers no credentials; omit it for every namespace');
  }
  for (const ns of namespaces) {
    if (!DNS_LABEL.test(ns)) throw new Error(`providerNamespaces: "${ns}" is not a valid namespace name (DNS-1123 label)`);
  }
  if (new Set(namespaces).size !== namespaces.length) throw new Error(`providerNamespaces: "${namespaces.join(',')}" lists a namespace twice`);
}

/** The backends of this install that get a provider identity: those asked for whose role this version runs. */
export function providerRolesOf(props: ResolvedInstallProps): BackendName[] {
  return props.backends.filter((b) => PROVIDER_ROLES_BUILT.includes(b));
}

export function imageOf(props: ResolvedInstallProps): string {
  return `${props.registry}/banlieue:${props.version}`;
}
