import { BACKEND_APIS, BACKENDS, type Backend } from '../api/backends.js';
import { RELEASE_TAG } from '../version.js';

export const DEFAULT_NAMESPACE = 'banlieue-system';
export const DEFAULT_REGISTRY = 'ghcr.io/banlieue';

/** Backends whose provider runs in the management cluster; Cloud Hypervisor's runs on its hosts. */
export const CLUSTER_SIDE_BACKENDS: readonly Backend[] = BACKEND_APIS.filter((b) => b.providerRuns === 'cluster').map((b) => b.name);

/**
 * Backends whose provider role this version runs (`banlieue provider <backend>`).
 * The others get their identity and RBAC but no Deployment, rather than one
 * that crash-loops, until their role is built (a unit test keeps this list and
 * the controller's backend registry equal).
 */
export const PROVIDER_ROLES_BUILT: readonly Backend[] = BACKEND_APIS.filter((b) => b.providerRoleBuilt).map((b) => b.name);

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
  readonly backends?: readonly Backend[];
  /**
   * Add the ValidatingAdmissionPolicies (Kubernetes 1.30+).
   * @default false
   */
  readonly admissionPolicies?: boolean;
  /**
   * Add NetworkPolicies for the banlieue pods.
   * @default false
   */
  readonly networkPolicies?: boolean;
}

export type ResolvedInstallProps = Required<BanlieueInstallProps>;

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
    admissionPolicies: props.admissionPolicies ?? false,
    networkPolicies: props.networkPolicies ?? false,
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
  return resolved;
}

export function imageOf(props: ResolvedInstallProps): string {
  return `${props.registry}/banlieue:${props.version}`;
}
