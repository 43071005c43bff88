// The libvirt client's transports against a real libvirtd (test driver):
// the handshake over unix, TCP, TLS and SSH, and each way of being refused,
// as a typed error with a message that names the target and no credential.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError } from '../../../controller/backends/backend-error.js';
import { LibvirtClient, type LibvirtClientOptions } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { createTestPki, type TestPki } from '../../support/test-pki.js';
import { LOOPBACK, freePort, startLibvirtd, type Libvirtd } from './libvirtd.js';
import { startSshd, type Sshd } from './sshd.js';

let daemon: Libvirtd;
let sshd: Sshd;
let strangers: TestPki;
let strangersDir: string;

beforeAll(async () => {
  daemon = await startLibvirtd();
  sshd = await startSshd(daemon.namespace, daemon.dir);
  strangersDir = mkdtempSync(join(tmpdir(), 'banlieue-other-ca-'));
  strangers = await createTestPki(strangersDir, 'some-other-ca');
});

afterAll(async () => {
  await sshd?.stop();
  await daemon?.stop();
  if (strangersDir) rmSync(strangersDir, { recursive: true, force: true });
});

const tls = (): LibvirtClientOptions['tls'] => ({ certPem: daemon.client.certPem, keyPem: daemon.client.keyPem, caPem: daemon.pki.caPem });
const ssh = (): LibvirtClientOptions['ssh'] => ({ privateKeyPem: sshd.clientKeyPem, hostKeyFingerprint: sshd.hostKeyFingerprint });

async function connectError(options: LibvirtClientOptions): Promise<unknown> {
  const error = await LibvirtClient.connect({ connectTimeoutMs: 60_000, ...options }).then(
    async (client) => {
      await client.close();
      return new Error('connected');
    },
    (err: unknown) => err,
  );
  return error;
}

describe('libvirt client transports', () => {
  it.each([
    ['unix', () => ({ uri: `test+unix:///default?socket=${daemon.socketPath}` })],
    ['tcp', () => ({ uri: `test+tcp://${LOOPBACK}:${daemon.tcpPort}/default` })],
    ['tls', () => ({ uri: `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`, tls: tls() })],
    ['ssh', () => ({ uri: `test+ssh://${sshd.user}@${LOOPBACK}:${sshd.port}/default`, ssh: ssh() })],
  ] as const)('opens test:///default over %s and calls the daemon', async (_transport, options) => {
    const client = await LibvirtClient.connect({ connectTimeoutMs: 60_000, ...options() });
    try {
      expect(client.connectedUri).toBe('test:///default');
      expect(await client.host.hypervisorType()).toBe('TEST');
      expect((await client.domains.list()).map((d) => d.name)).toContain('test');
    } finally {
      await client.close();
    }
  });

  it('reports a client certificate the daemon does not trust as Unauthorized', async () => {
    const stranger = await strangers.issueClient('stranger', 'stranger');
    const error = await connectError({
      uri: `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`,
      tls: { certPem: stranger.certPem, keyPem: stranger.keyPem, caPem: daemon.pki.caPem },
    });
    expect(isBackendError(error, BackendErrorKind.Unauthorized), String(error)).toBe(true);
    expect((error as Error).message).toContain(`${LOOPBACK}:${daemon.tlsPort}`);
    expect((error as Error).message).not.toContain('PRIVATE KEY');
  });

  it('reports a daemon certificate not signed by the given CA as Unreachable with the TLS code', async () => {
    const error = await connectError({
      uri: `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`,
      tls: { certPem: daemon.client.certPem, keyPem: daemon.client.keyPem, caPem: strangers.caPem },
    });
    expect(isBackendError(error, BackendErrorKind.Unreachable), String(error)).toBe(true);
    expect((error as { code?: string }).code).toMatch(/VERIFY|CERT/);
  });

  it('reports an SSH key the server does not accept as Unauthorized', async () => {
    const error = await connectError({
      uri: `test+ssh://${sshd.user}@${LOOPBACK}:${sshd.port}/default`,
      ssh: { privateKeyPem: sshd.strangerKeyPem, hostKeyFingerprint: sshd.hostKeyFingerprint },
    });
    expect(isBackendError(error, BackendErrorKind.Unauthorized), String(error)).toBe(true);
    expect((error as Error).message).toContain(`"${sshd.user}"`);
    expect((error as Error).message).not.toContain('PRIVATE KEY');
  });

  it('refuses an SSH server whose host key is not the expected one', async () => {
    const error = await connectError({
      uri: `test+ssh://${sshd.user}@${LOOPBACK}:${sshd.port}/default`,
      ssh: { privateKeyPem: sshd.clientKeyPem, hostKeyFingerprint: 'SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    expect(isBackendError(error, BackendErrorKind.Unreachable), String(error)).toBe(true);
    expect((error as { code?: string }).code).toBe('HostKeyMismatch');
  });

  it('reports a port nobody listens on as Unreachable', async () => {
    const port = await freePort();
    const error = await connectError({ uri: `test+tcp://${LOOPBACK}:${port}/default` });
    expect(isBackendError(error, BackendErrorKind.Unreachable), String(error)).toBe(true);
    expect((error as { code?: string }).code).toBe('ECONNREFUSED');
    expect((error as Error).message).toContain(`${LOOPBACK}:${port}`);
  });

  it('reports a missing unix socket as Unreachable', async () => {
    const error = await connectError({ uri: `test+unix:///default?socket=${join(daemon.dir, 'no-such-sock')}` });
    expect(isBackendError(error, BackendErrorKind.Unreachable), String(error)).toBe(true);
    expect((error as { code?: string }).code).toBe('ENOENT');
  });
});
