// The libvirt client's connection over time, against a real libvirtd: a
// daemon that stops answering is detected by keepalive, a restarted one is
// dialled again by the next call (and event callbacks registered anew), and a
// pass's AbortSignal cuts its calls short.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError, type BackendError } from '../../../controller/backends/backend-error.js';
import { withSignal } from '../../../controller/backends/cancellation.js';
import { LifecycleEvent } from '../../../controller/backends/libvirt/client/constants.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { waitFor } from '../../support/wait.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

/** Generous: the outcome is waited for, never timed (the machine is busy). */
const OUTCOME_TIMEOUT_MS = 90_000;

let daemon: Libvirtd;
let anchor: LibvirtClient;
const uri = (): string => `test+unix:///default?socket=${daemon.socketPath}`;

beforeAll(async () => {
  daemon = await startLibvirtd({ listenNetwork: false });
  anchor = await LibvirtClient.connect({ uri: uri() });
});

afterAll(async () => {
  await anchor?.close();
  await daemon?.stop();
});

const domainXml = (name: string): string =>
  `<domain type='test'><name>${name}</name><uuid>${randomUUID()}</uuid><memory unit='MiB'>64</memory><os><type>hvm</type></os></domain>`;

describe('libvirt client connection', () => {
  it(
    'drops a connection whose daemon stopped answering once keepalive gives up, failing the call in flight',
    async () => {
      const client = await LibvirtClient.connect({ uri: uri(), keepalive: { intervalMs: 500, count: 3 } });
      const lost: BackendError[] = [];
      client.onDisconnect((error) => lost.push(error));
      daemon.freeze();
      try {
        const error = await client.domains.list().catch((e: unknown) => e);
        expect(isBackendError(error, BackendErrorKind.Unreachable), String(error)).toBe(true);
        expect((error as BackendError).code).toBe('KeepaliveTimeout');
        expect(lost.map((e) => e.code)).toEqual(['KeepaliveTimeout']);
        expect(client.isConnected).toBe(false);
      } finally {
        daemon.thaw();
      }
      // The next call dials again.
      expect((await client.domains.list()).length).toBeGreaterThan(0);
      expect(client.isConnected).toBe(true);
      await client.close();
    },
    OUTCOME_TIMEOUT_MS,
  );

  it('ends a call promptly when the pass it runs for is aborted', async () => {
    const client = await LibvirtClient.connect({ uri: uri(), keepalive: false });
    const controller = new AbortController();
    daemon.freeze();
    try {
      const call = withSignal(controller.signal, () => client.host.hostname());
      controller.abort(new Error('role stopping'));
      await expect(call).rejects.toThrow('role stopping');
      await expect(withSignal(controller.signal, () => client.host.hostname())).rejects.toThrow('role stopping');
    } finally {
      daemon.thaw();
    }
    // The connection itself is still good.
    expect(await client.host.hostname()).not.toBe('');
    await client.close();
  });

  it(
    'dials again after the daemon restarts and registers its event callback anew',
    async () => {
      const client = await LibvirtClient.connect({ uri: uri() });
      const events: string[] = [];
      const stop = await client.events.onLifecycle((event) => {
        if (event.event === LifecycleEvent.Defined) events.push(event.domain.name);
      });
      const lost: BackendError[] = [];
      client.onDisconnect((error) => lost.push(error));

      await daemon.restart();
      await waitFor('the client to see the connection lost', () => lost.length > 0, OUTCOME_TIMEOUT_MS);
      expect(isBackendError(lost[0], BackendErrorKind.Unreachable)).toBe(true);
      // The anchor's connection went with the old daemon too: it dials again on its next call.
      expect(await anchor.host.uri()).toBe('test:///default');

      // Events: the client dials again by itself while someone listens, and registers anew.
      await waitFor('the listening client to reconnect', () => client.isConnected, OUTCOME_TIMEOUT_MS);
      const name = `after-restart-${randomUUID().slice(0, 8)}`;
      await anchor.domains.define(domainXml(name));
      await waitFor('the Defined event from the restarted daemon', () => events.includes(name), OUTCOME_TIMEOUT_MS);
      await stop();
      await client.close();
    },
    OUTCOME_TIMEOUT_MS * 2,
  );
});
