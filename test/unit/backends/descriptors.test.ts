// The registry and the API's backend list describe the same backends, and what
// a descriptor's code reads agrees with what its API entry says.
import { describe, expect, it } from 'vitest';
import { ProxmoxCredentialKeys } from '../../../controller/backends/proxmox/client/credentials.js';
import { BUILT_IN_BACKENDS } from '../../../controller/backends/registry.js';
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import { proxmoxApi } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';

describe('backend descriptors', () => {
  it('pair each API entry with one descriptor, in the order of the API list', () => {
    expect(BUILT_IN_BACKENDS.all.map((d) => d.api)).toEqual([...BACKEND_APIS]);
  });

  it.each(BUILT_IN_BACKENDS.all.map((d) => [d.api.name, d] as const))('%s has a provider role exactly when its API entry says it is built', (_, d) => {
    expect(d.createBackend !== undefined).toBe(d.api.providerRoleBuilt);
  });

  it('name the Proxmox credentials Secret keys the client reads', () => {
    expect(proxmoxApi.credentials.keys).toEqual(Object.values(ProxmoxCredentialKeys));
  });

  it.each(BACKEND_APIS.map((b) => [b.name, b] as const))('%s: a Secret with keys is one the Provider must name', (_, api) => {
    if (api.credentials.keys.length > 0) expect(api.credentials.secret).toBe('required');
  });
});
