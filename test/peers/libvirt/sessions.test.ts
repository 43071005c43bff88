// The libvirt session pool against a real libvirtd: passes of one Provider
// share a client; a rotated Secret gets a new one and the old one is closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../../controller/backends/backend.js';
import { LibvirtCredentialKey } from '../../../controller/backends/libvirt/credentials.js';
import { libvirtSessions } from '../../../controller/backends/libvirt/sessions.js';
import type { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { LOOPBACK, startLibvirtd, type Libvirtd } from './libvirtd.js';

let daemon: Libvirtd;
const pool = libvirtSessions();

beforeAll(async () => {
  daemon = await startLibvirtd();
});

afterAll(async () => {
  await pool.closeAll();
  await daemon?.stop();
});

function tlsConnection(certPem: string, keyPem: string): Connection {
  return {
    endpoint: `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`,
    credentials: { [LibvirtCredentialKey.TlsCert]: certPem, [LibvirtCredentialKey.TlsKey]: keyPem },
    caPem: daemon.pki.caPem,
    insecureSkipTLSVerify: false,
  };
}

describe('libvirt session pool', () => {
  it('shares one client between the passes of a Provider and replaces it when the Secret rotates', async () => {
    const first = tlsConnection(daemon.client.certPem, daemon.client.keyPem);
    const clients: LibvirtClient[] = [];
    await Promise.all([1, 2, 3].map(() => pool.use(first, async (client) => clients.push(client) && client.host.hostname())));
    expect(new Set(clients).size).toBe(1);
    expect(pool.size).toBe(1);

    const rotated = await daemon.pki.issueClient('rotated', 'banlieue-rotated');
    const hostname = await pool.use(tlsConnection(rotated.certPem, rotated.keyPem), (client) => {
      clients.push(client);
      return client.host.hostname();
    });
    expect(hostname).not.toBe('');
    expect(pool.size).toBe(1);
    expect(clients[3]).not.toBe(clients[0]);
    await expect(clients[0]?.host.hostname()).rejects.toThrow(/closed/);
  });
});
