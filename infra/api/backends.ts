// The backends the API knows, once. The kinds tables, the install, the
// Provider's and VMImage's enums, rules and descriptions, the clusterctl
// flavors and the docs tables derive from this list; the controller's registry
// (controller/backends/registry.ts) pairs each entry with its descriptor. A new
// backend adds its machine-kind file, an import, an export and an entry here.
import { cloudHypervisorApi } from './infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { libvirtApi } from './infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { proxmoxApi } from './infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { vsphereApi } from './infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { BackendApi } from './backend-api.js';

export type { BackendApi } from './backend-api.js';

// Each backend's schemas, types and kinds, for the npm package (infra/api/index.ts).
export * from './infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
export * from './infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
export * from './infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
export * from './infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';

export const BACKEND_APIS = [vsphereApi, proxmoxApi, libvirtApi, cloudHypervisorApi] as const;

type NamesOf<T extends readonly BackendApi[]> = { readonly [K in keyof T]: T[K]['name'] };

/** Backend names, as a Provider's providerClassRef and a VMImage source name them. */
export const BACKENDS = BACKEND_APIS.map((b) => b.name) as unknown as NamesOf<typeof BACKEND_APIS>;
export type BackendName = (typeof BACKENDS)[number];

/** The API entry of `name`; undefined for a name no entry has. */
export function backendApi(name: string): BackendApi | undefined {
  return BACKEND_APIS.find((b) => b.name === name);
}
