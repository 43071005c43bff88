// A vCenter session for one pass: no client outlives a reconcile, so rotated
// credentials and CA bundles apply at the next one.
import type { Connection } from '../backend.js';
import { VsphereClient } from './client/vsphere-client.js';

export async function withClient<T>(connection: Connection, use: (client: VsphereClient) => Promise<T>): Promise<T> {
  const client = await VsphereClient.connect({
    endpoint: connection.endpoint,
    username: connection.credentials.username ?? '',
    password: connection.credentials.password ?? '',
    ...(connection.caPem ? { caPem: connection.caPem } : {}),
    insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
  });
  try {
    return await use(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}
