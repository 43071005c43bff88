// The RPC hold proxy the libvirt fault run puts between the provider and
// libvirtd (rpc-hold-proxy.ts), against a real libvirtd: a held call delays
// only itself, and a held call whose client was killed still reaches the
// daemon, as a request to a real host outlives its client.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { Procedures } from '../../../controller/backends/libvirt/client/procedures.js';
import { anchorClient } from '../../support/libvirt/world.js';
import { waitFor } from '../../support/wait.js';
import { LOOPBACK, startLibvirtd, type Libvirtd } from './libvirtd.js';
import { startRpcHoldProxy } from './rpc-hold-proxy.js';

/** Generous: the outcome is waited for, never timed (the machine is busy). */
const OUTCOME_TIMEOUT_MS = 90_000;
const DEFINE = Procedures.domainDefineXmlFlags.number;

let daemon: Libvirtd;
let anchor: LibvirtClient;

beforeAll(async () => {
  daemon = await startLibvirtd();
  anchor = await anchorClient(daemon);
});

afterAll(async () => {
  await anchor?.close();
  await daemon?.stop();
});

const domainXml = (name: string, uuid: string): string =>
  `<domain type='test'><name>${name}</name><uuid>${uuid}</uuid><memory unit='MiB'>64</memory><os><type>hvm</type></os></domain>`;
const isDefined = (uuid: string): Promise<boolean> =>
  anchor.domains.lookupByUuid(uuid).then(
    () => true,
    () => false,
  );

describe('libvirt RPC hold proxy', () => {
  it(
    'holds a domain definition while the other calls on the same connection are answered',
    async () => {
      // Held far longer than the test runs: the definition must not reach the daemon while it does.
      const proxy = await startRpcHoldProxy({ upstreamPort: daemon.tcpPort, holdMs: { [DEFINE]: 600_000 } });
      const client = await LibvirtClient.connect({ uri: `test+tcp://${LOOPBACK}:${proxy.port}/default` });
      try {
        const uuid = randomUUID();
        const define = client.domains.define(domainXml(`held-${uuid.slice(0, 8)}`, uuid));
        define.catch(() => undefined);
        await waitFor('the definition held', () => proxy.held.get(DEFINE) === 1, OUTCOME_TIMEOUT_MS);
        expect((await client.domains.list()).length).toBeGreaterThan(0);
        expect(await client.host.hostname()).not.toBe('');
        expect(await isDefined(uuid)).toBe(false);
      } finally {
        await proxy.close();
        await client.close();
      }
    },
    2 * OUTCOME_TIMEOUT_MS,
  );

  it(
    'still delivers a held definition whose client was killed, and closes the daemon side once it is answered',
    async () => {
      const proxy = await startRpcHoldProxy({ upstreamPort: daemon.tcpPort, holdMs: { [DEFINE]: 1_000 } });
      const client = await LibvirtClient.connect({ uri: `test+tcp://${LOOPBACK}:${proxy.port}/default` });
      try {
        const uuid = randomUUID();
        const define = client.domains.define(domainXml(`orphaned-${uuid.slice(0, 8)}`, uuid));
        define.catch(() => undefined);
        await waitFor('the definition held', () => proxy.held.get(DEFINE) === 1, OUTCOME_TIMEOUT_MS);
        // As kill -9 would: the socket goes, no CONNECT_CLOSE.
        (await client.connection()).close();
        await waitFor('the domain defined by the held call', () => isDefined(uuid), OUTCOME_TIMEOUT_MS);
        await waitFor('the proxy to drop the daemon side', () => proxy.open === 0, OUTCOME_TIMEOUT_MS);
        expect(proxy.heldPastClient).toBe(1);
      } finally {
        await proxy.close();
        await client.close();
      }
    },
    2 * OUTCOME_TIMEOUT_MS,
  );
});
