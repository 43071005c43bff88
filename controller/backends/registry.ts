// The backends compiled into this binary, by the name a Provider's
// providerClassRef uses. Adding a backend adds a line here.
import type { Backend as BackendName } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { Backend, BackendContext } from './backend.js';
import { createVsphereBackend } from './vsphere/vsphere-backend.js';

const FACTORIES: Partial<Record<BackendName, (context: BackendContext) => Backend>> = {
  vsphere: createVsphereBackend,
};

/** Backends whose provider role this binary runs. */
export const BUILT_BACKENDS = Object.keys(FACTORIES) as BackendName[];

/** What creates the backend of one role (it owns its sessions); undefined when this binary has none of that name. */
export function backendFactory(name: string): ((context: BackendContext) => Backend) | undefined {
  return FACTORIES[name as BackendName];
}
