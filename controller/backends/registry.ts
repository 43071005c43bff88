// The backends compiled into this binary, by the name a Provider's
// providerClassRef uses. Adding a backend adds a line here.
import type { Backend as BackendName } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { Backend } from './backend.js';
import { vsphereBackend } from './vsphere/vsphere-backend.js';

const BACKENDS: Partial<Record<BackendName, Backend>> = {
  vsphere: vsphereBackend,
};

export function backendNamed(name: string): Backend | undefined {
  return BACKENDS[name as BackendName];
}
