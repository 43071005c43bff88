// One dial shared by the passes that need a connection at once, against a
// real libvirtd behind the RPC hold proxy (its handshake held, as a daemon
// that accepts but is slow or frozen): each pass waits for the dial only as
// long as its own AbortSignal allows (a Provider's discovery deadline must
// hold while a machine's pass started the dial), and a pass that gives up
// does not take the dial away from the others. Found by the libvirt fault
// run: with the daemon frozen, ProviderReachable=False came after the 30 s
// connect timeout instead of the discovery deadline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSignal } from '../../../controller/backends/cancellation.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { Procedures } from '../../../controller/backends/libvirt/client/procedures.js';
import { LOOPBACK, startLibvirtd, type Libvirtd } from './libvirtd.js';
import { startRpcHoldProxy } from './rpc-hold-proxy.js';

/** Generous: outcomes are waited for, never timed (the machine is busy). */
const OUTCOME_TIMEOUT_MS = 90_000;

let daemon: Libvirtd;

beforeAll(async () => {
  daemon = await startLibvirtd();
});

afterAll(async () => {
  await daemon?.stop();
});

describe('libvirt client dial shared by concurrent passes', () => {
  it(
    'ends a pass waiting on a dial another pass started as soon as its own signal aborts',
    async () => {
      // The handshake's first call held longer than the test runs: the dial never completes here.
      const proxy = await startRpcHoldProxy({ upstreamPort: daemon.tcpPort, holdMs: { [Procedures.authList.number]: 600_000 } });
      const client = new LibvirtClient({ uri: `test+tcp://${LOOPBACK}:${proxy.port}/default`, connectTimeoutMs: 600_000 });
      try {
        // A machine's pass, no deadline of its own: it starts the dial.
        const first = client.host.hostname();
        first.catch(() => undefined);
        // The discovery, with its deadline.
        const deadline = new AbortController();
        const discovery = withSignal(deadline.signal, () => client.host.hostname());
        deadline.abort(new Error('no answer to discovery within 8 s'));
        await expect(discovery).rejects.toThrow('no answer to discovery within 8 s');
      } finally {
        await client.close();
        await proxy.close();
      }
    },
    OUTCOME_TIMEOUT_MS,
  );

  it(
    'keeps dialling for the other passes when the pass that started the dial gives up',
    async () => {
      const proxy = await startRpcHoldProxy({ upstreamPort: daemon.tcpPort, holdMs: { [Procedures.authList.number]: 2_000 } });
      const client = new LibvirtClient({ uri: `test+tcp://${LOOPBACK}:${proxy.port}/default` });
      try {
        const stopping = new AbortController();
        const aborted = withSignal(stopping.signal, () => client.host.hostname());
        const other = client.host.hostname();
        stopping.abort(new Error('pass cancelled'));
        await expect(aborted).rejects.toThrow('pass cancelled');
        expect(await other).not.toBe('');
        expect(client.isConnected).toBe(true);
      } finally {
        await client.close();
        await proxy.close();
      }
    },
    OUTCOME_TIMEOUT_MS,
  );
});
