// The vSphere backend: a vCenter (or vcsim) reached over vim25 SOAP.
import type { FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { Backend, Connection } from '../backend.js';
import { VsphereClient } from './client/vsphere-client.js';
import { discoverInventory } from './discovery.js';
import { toFailureDomains } from './mapping.js';

export const vsphereBackend: Backend = {
  name: 'vsphere',
  credentialKeys: ['username', 'password'],
  async discover(provider: Provider, connection: Connection): Promise<FailureDomainStatus[]> {
    // No client outlives a reconcile: rotated credentials apply next time.
    const client = await VsphereClient.connect({
      endpoint: connection.endpoint,
      username: connection.credentials.username ?? '',
      password: connection.credentials.password ?? '',
      ...(connection.caPem ? { caPem: connection.caPem } : {}),
      insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
    });
    try {
      return toFailureDomains(provider, await discoverInventory(client));
    } finally {
      await client.close().catch(() => undefined);
    }
  },
};
