// What the API knows of one backend, in one object: its machine-kind file
// under infrastructure.banlieue.io/ exports it (`defineBackendApi`) and
// infra/api/backends.ts lists it. Everything in infra/ that differs between
// backends is read from these entries: the kinds tables, the Provider's and
// VMImage's enums, rules and field descriptions, the install (Deployments,
// RBAC, NetworkPolicies), the clusterctl flavors and the docs tables.
import type { ClusterTemplateFlavor } from '../clusterctl/flavor.js';
import type { KindDefinition } from './kind.js';
import type { TObject } from './schema.js';

/** What a VMImage source can be; each backend says which it reads (BackendApi.imageSources). */
export const IMAGE_SOURCE_KINDS = ['Template', 'BackingFile', 'Url'] as const;
export type ImageSourceKind = (typeof IMAGE_SOURCE_KINDS)[number];

/** One URL scheme a Provider endpoint of a backend may use. */
export interface EndpointScheme {
  /** e.g. https, qemu+tls, unix. */
  readonly scheme: string;
  /** The port an endpoint of this scheme dials when it names none; none for a path (unix://). */
  readonly defaultPort?: number;
  /** Set on a scheme users are not meant to write, saying what it is for (e.g. "libvirt's test driver"); messages name it apart. */
  readonly onlyFor?: string;
  /**
   * Set on a scheme whose transport neither authenticates the far end nor encrypts: whoever
   * answers at the address gets the provider's calls. Such an endpoint is admitted only in a
   * namespace a cluster admin opted in (infra/install/insecure-transport-policy.ts).
   */
  readonly unprotected?: true;
}

export interface BackendEndpoint {
  /** The schemes a Provider endpoint may use; the API refuses any other. */
  readonly schemes: readonly EndpointScheme[];
  /** Endpoints as the Provider's `connection.endpoint` description shows them, e.g. `https://vcenter/sdk`. */
  readonly example: string;
  /** Whether `connection.insecureSkipTLSVerify` is allowed. */
  readonly insecureSkipTLSVerify: boolean;
}

export interface BackendCredentials {
  /** A Provider must name a credentials Secret, or must not (a provider role that runs on the host it drives). */
  readonly secret: 'required' | 'forbidden';
  /** Keys the Secret always holds; the provider role checks them before dialling. */
  readonly keys: readonly string[];
  /** The keys as the Provider's `credentialsRef` description lists them, when they depend on more than `keys` says. @default keys, comma-separated */
  readonly description?: string;
}

/** How a backend reads one kind of VMImage source. */
export interface ImageSourceUse {
  /** What `ref` names, e.g. `template name`; the VMImage's `kind` description lists it after the backend's title. */
  readonly ref: string;
  /** A form `ref` must have, refused by the API otherwise. */
  readonly refPattern?: {
    /** RE2, as CEL's `matches` reads it. */
    readonly regex: string;
    /** What the pattern means, as the refusal says it: `a VMID (100-999999999)`. */
    readonly means: string;
  };
  /** Whether a source of this kind takes `cloneMode` (Full or Linked); no other source may set it. */
  readonly cloneModes?: boolean;
}

/**
 * One backend, as the API knows it. `Settings` is the schema of its block of
 * Provider settings, if it has one (`spec.<camelCase name>`).
 */
export interface BackendApi<Name extends string = string, Settings extends TObject | undefined = TObject | undefined> {
  /** As a Provider's providerClassRef and a VMImage source name it: lower case, digits and inner '-'. */
  readonly name: Name;
  /** How docs and descriptions name it, e.g. vSphere. */
  readonly title: string;
  /** What one Provider of it is, e.g. `a vCenter`. */
  readonly instance: string;
  /** providerID is `<scheme>://<UUID>`, after the peer convention where one exists (CAPV, CAPMOX). */
  readonly providerIDScheme: string;
  readonly machine: KindDefinition;
  readonly machineTemplate: KindDefinition;
  readonly cluster: KindDefinition;
  readonly clusterTemplate: KindDefinition;
  /** `cluster`: the provider role runs as a Deployment; `host`: on each host (outside Kubernetes). */
  readonly providerRuns: 'cluster' | 'host';
  /** Whether this version has the provider role; the others get identity and RBAC but no Deployment. */
  readonly providerRoleBuilt: boolean;
  /** TCP ports the provider role dials (NetworkPolicy egress). */
  readonly egressPorts: readonly number[];
  readonly endpoint: BackendEndpoint;
  readonly credentials: BackendCredentials;
  /** Keys of a storage or network class `target` it reads, e.g. datastore, portGroup. */
  readonly classTargetKeys: readonly string[];
  /**
   * Kinds of backend object its machines name in their spec (datastore, bridge…), as a Provider's
   * spec.allowedTargets, capability class targets and failure domain raw facts publish them.
   */
  readonly targetKinds: readonly string[];
  /** The VMImage source kinds it reads. */
  readonly imageSources: Readonly<Partial<Record<ImageSourceKind, ImageSourceUse>>>;
  /** What a VirtualMachine's `spec.folder` is on it, e.g. `VM folder; defaults to the datacenter VM folder`; unset: it ignores the field. */
  readonly virtualMachineFolder?: string;
  /** Its block of Provider settings, `spec.<camelCase name>`, allowed only on its Providers. */
  readonly providerSettings?: Settings;
  /** Its clusterctl flavor; without one, no cluster template is shipped for it. */
  readonly clusterctl?: ClusterTemplateFlavor;
}

const NAME = /^[a-z]([a-z0-9-]*[a-z0-9])?$/;

/** A backend's API entry, checked: its name must be usable in CEL string literals, field and flavor names. */
export function defineBackendApi<const Name extends string, const Settings extends TObject | undefined = undefined>(
  api: BackendApi<Name, Settings>,
): BackendApi<Name, Settings> {
  if (!NAME.test(api.name)) throw new Error(`backend name "${api.name}" must be lower case letters, digits and inner '-'`);
  return api;
}

/** `cloud-hypervisor` → `cloudHypervisor`: the Provider field of a backend's settings block. */
export type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

export function camelCase<S extends string>(name: S): CamelCase<S> {
  return name.replace(/-([a-z0-9])/g, (_all, c: string) => c.toUpperCase()) as CamelCase<S>;
}
