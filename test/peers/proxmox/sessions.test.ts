// The Proxmox client pool against the simulator: passes share one client per
// connection, a rotated secret replaces it, a refused token is not kept.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../../controller/backends/backend.js';
import { proxmoxClients } from '../../../controller/backends/proxmox/sessions.js';
import type { ProxmoxClient } from '../../../controller/backends/proxmox/client/proxmox-client.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';

let sim: ProxmoxSim;
let connection: Connection;

beforeAll(async () => {
  sim = await startProxmoxSim({ nodes: ['pve1'] });
  connection = {
    endpoint: sim.url,
    credentials: { tokenID: sim.token.tokenID, tokenSecret: sim.token.tokenSecret },
    caPem: sim.caPem,
    insecureSkipTLSVerify: false,
  };
});

afterAll(async () => {
  await sim?.stop();
});

describe('Proxmox client pool', () => {
  it('gives concurrent and successive passes of one connection the same client', async () => {
    const pool = proxmoxClients();
    const seen = new Set<ProxmoxClient>();
    await Promise.all(Array.from({ length: 4 }, () => pool.use(connection, async (client) => void seen.add((await client.cluster.version()) && client))));
    await pool.use(connection, async (client) => void seen.add(client));

    expect(seen.size).toBe(1);
    expect(pool.size).toBe(1);
    const closed = pool.closeAll();
    expect(pool.size).toBe(0);
    await closed;
  });

  it('replaces the client when the secret rotates, and drops one whose token is refused', async () => {
    sim.addToken({ tokenID: 'rotating@pve!token', secret: 'first', privileges: { '/': ['Sys.Audit'] } });
    const pool = proxmoxClients();
    const rotating = (secret: string): Connection => ({ ...connection, credentials: { tokenID: 'rotating@pve!token', tokenSecret: secret } });
    const first = await pool.use(rotating('first'), async (client) => (await client.cluster.version()) && client);

    sim.addToken({ tokenID: 'rotating@pve!token', secret: 'second', privileges: { '/': ['Sys.Audit'] } });
    await expect(pool.use(rotating('first'), (client) => client.cluster.version())).rejects.toMatchObject({ kind: 'Unauthorized' });
    expect(pool.size).toBe(0);
    const second = await pool.use(rotating('second'), async (client) => (await client.cluster.version()) && client);

    expect(second).not.toBe(first);
    expect(pool.size).toBe(1);
    await pool.closeAll();
  });

  it('refuses a Secret without the token keys as Unauthorized', async () => {
    const pool = proxmoxClients();

    await expect(pool.use({ ...connection, credentials: { username: 'x' } }, async () => undefined)).rejects.toMatchObject({
      kind: 'Unauthorized',
      code: 'CredentialsUnavailable',
    });
  });
});
