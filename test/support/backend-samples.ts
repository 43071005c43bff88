// What tests need to know of each backend, in one table: a Provider's endpoint
// and credentials, the VMImage source, the capability target keys, the
// failure-domain raw facts the machine builder reads. Keyed by `Backend`, so a
// backend added to infra/api/backends.ts does not compile here until it has a
// sample. The unit and integration fixtures build from it.
import { BACKEND_APIS, BACKENDS, type BackendName } from '../../infra/api/backends.js';
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { PerProviderImageStatus, VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';

/** A capability target: the key a class's `target` uses for this backend, and a sample id. */
export interface TargetSample {
  readonly key: string;
  readonly id: string;
}

export interface BackendSample {
  /** `spec.connection.endpoint` of a Provider, in the form the API admits for this backend. */
  readonly endpoint: string;
  /** Whether a Provider names a credentials Secret: the API requires one for remote backends and forbids it for cloud-hypervisor. */
  readonly credentials: boolean;
  /** The VMImage source of this backend. */
  readonly source: { readonly kind: VMImage['spec']['sources'][number]['kind']; readonly ref: string };
  /** A storage class target. */
  readonly storage: TargetSample;
  /** A network class target. */
  readonly network: TargetSample;
  /** A sample site, where `raw` puts a failure domain: the vSphere cluster or Proxmox node; unused by the others. */
  readonly site: string;
  /** Failure-domain raw facts the machine builder needs, for a domain on `site`. */
  readonly raw: (site: string) => Record<string, string>;
  /** Raw facts the machine builder reads when present. */
  readonly optionalRaw: Record<string, string>;
  /** The InfraMachine kind, from the API list. */
  readonly machineKind: string;
}

/** Each sample as stated here; the `Record<BackendName, …>` is what makes a new backend need one. */
const STATED: Record<BackendName, Omit<BackendSample, 'machineKind'>> = {
  vsphere: {
    endpoint: 'https://vc.example.com/sdk',
    credentials: true,
    source: { kind: 'Template', ref: 'ubuntu-24.04' },
    storage: { key: 'datastore', id: 'ds-ssd' },
    network: { key: 'portGroup', id: 'pg-prod' },
    site: 'c1',
    raw: (cluster) => ({ datacenter: 'dc1', cluster }),
    optionalRaw: { resourcePool: 'rp-gold' },
  },
  proxmox: {
    endpoint: 'https://pve.example.com:8006',
    credentials: true,
    source: { kind: 'Template', ref: '9000' },
    storage: { key: 'storage', id: 'ceph' },
    network: { key: 'bridge', id: 'vmbr0' },
    site: 'pve1',
    raw: (node) => ({ node, isoStorage: 'local' }),
    optionalRaw: {},
  },
  libvirt: {
    endpoint: 'qemu+tls://kvm.example.com/system',
    credentials: true,
    source: { kind: 'BackingFile', ref: 'ubuntu-24.04.qcow2' },
    storage: { key: 'pool', id: 'nvme' },
    network: { key: 'network', id: 'default' },
    site: 'kvm1',
    raw: () => ({}),
    optionalRaw: {},
  },
  'cloud-hypervisor': {
    endpoint: 'unix:///run/banlieue',
    credentials: false,
    source: { kind: 'BackingFile', ref: 'ubuntu-24.04.raw' },
    // The host resolves classes itself (a CloudHypervisorMachine carries class names), so no builder reads these ids.
    storage: { key: 'path', id: '/var/lib/banlieue/fast' },
    network: { key: 'bridge', id: 'br0' },
    site: 'ch1',
    raw: () => ({}),
    optionalRaw: {},
  },
};

/** One sample per backend; the machine kind is the API's. */
export const BACKEND_SAMPLES = Object.fromEntries(BACKEND_APIS.map((api) => [api.name, { ...STATED[api.name], machineKind: api.machine.kind }])) as Record<
  BackendName,
  BackendSample
>;

/** A Provider's `spec.connection` for `backend`: the sample endpoint, and Secret `credentials` when the backend takes one. */
export function connection(backend: BackendName, credentials: string): Provider['spec']['connection'] {
  return { endpoint: BACKEND_SAMPLES[backend].endpoint, ...(BACKEND_SAMPLES[backend].credentials ? { credentialsRef: { name: credentials } } : {}) };
}

export interface VMImageProps {
  /** Backends the image has a source for. @default every backend */
  readonly backends?: readonly BackendName[];
  /** `status.perProvider`. @default no status */
  readonly rows?: PerProviderImageStatus[];
}

/** An Ubuntu 24.04 image with each backend's sample source. */
export function vmImage(name: string, props: VMImageProps = {}): VMImage {
  const backends = props.backends ?? BACKENDS;
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'VMImage',
    metadata: { name },
    spec: {
      osFamily: 'linux',
      osDistribution: 'ubuntu',
      osVersion: '24.04',
      architecture: 'amd64',
      sources: backends.map((providerClass) => ({ providerClass, ...BACKEND_SAMPLES[providerClass].source })),
    },
    ...(props.rows ? { status: { perProvider: props.rows } } : {}),
  };
}
