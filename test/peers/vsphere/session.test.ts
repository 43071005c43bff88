// The vim25 session and transport against a real vcsim: login, TLS
// verification, deadlines, and re-login after the server drops the session.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendError } from '../../../controller/backends/backend-error.js';
import { Inventory } from '../../../controller/backends/vsphere/client/inventory.js';
import { PropertyCollector } from '../../../controller/backends/vsphere/client/property-collector.js';
import { VsphereSession } from '../../../controller/backends/vsphere/client/session.js';
import { HttpsSoapTransport, type SoapCaller } from '../../../controller/backends/vsphere/client/transport.js';
import { VsphereClient, type VsphereClientOptions } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { makeServingFiles } from '../../support/test-pki.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let options: VsphereClientOptions;

beforeAll(async () => {
  // CurrentTime is slowed down to test the per-call deadline; nothing else calls it.
  sim = await startVcsim({ datacenters: 1, clusters: 1, methodDelayMs: { CurrentTime: 3_000 } });
  options = { endpoint: sim.url, username: sim.username, password: sim.password, caPem: sim.caPem };
});

afterAll(async () => {
  await sim?.stop();
});

describe('vSphere session', () => {
  it('logs in with the right password and reads the server identity', async () => {
    const client = await VsphereClient.connect(options);
    try {
      expect(client.about.apiType).toBe('VirtualCenter');
      expect(client.session.key).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await client.close();
    }
  });

  it('refuses a wrong password as Unauthorized with fault InvalidLogin', async () => {
    await expect(VsphereClient.connect({ ...options, password: 'wrong' })).rejects.toMatchObject({
      name: 'VsphereFault',
      kind: 'Unauthorized',
      faultType: 'InvalidLogin',
    });
  });

  it('logs in again, once and transparently, after the server terminated the session', async () => {
    const admin = await VsphereClient.connect(options);
    const client = await VsphereClient.connect(options);
    try {
      const before = client.session.key;
      await admin.session.invoke('TerminateSession', admin.session.serviceContent.sessionManager, { sessionId: [before ?? ''] });

      const datacenters = await client.inventory.datacenters();

      expect(datacenters.map((dc) => dc.name)).toEqual(['DC0']);
      expect(client.session.key).toBeDefined();
      expect(client.session.key).not.toBe(before);
    } finally {
      await Promise.all([admin.close(), client.close()]);
    }
  });

  it('logs in only once when many concurrent calls find the session gone', async () => {
    const admin = await VsphereClient.connect(options);
    const methods: string[] = [];
    const transport = new HttpsSoapTransport(options);
    // The real transport, with the methods it is asked to call written down.
    const recording: SoapCaller = {
      call: (method, fields) => {
        methods.push(method);
        return transport.call(method, fields);
      },
      clearSession: () => transport.clearSession(),
      close: () => transport.close(),
    };
    const session = await VsphereSession.open(options, recording);
    try {
      await admin.session.invoke('TerminateSession', admin.session.serviceContent.sessionManager, { sessionId: [session.key ?? ''] });
      methods.length = 0;

      const names = await Promise.all(Array.from({ length: 5 }, () => new Inventory(session.serviceContent, new PropertyCollector(session)).datacenters()));

      expect(names.flat().map((dc) => dc.name)).toEqual(['DC0', 'DC0', 'DC0', 'DC0', 'DC0']);
      expect(methods.filter((m) => m === 'Login')).toHaveLength(1);
    } finally {
      await Promise.all([admin.close(), session.close()]);
    }
  });

  it('fails a call that outlives its deadline as Unreachable with code Timeout', async () => {
    const client = await VsphereClient.connect({ ...options, timeoutMs: 1_000 });
    try {
      await expect(client.session.invoke('CurrentTime', { type: 'ServiceInstance', value: 'ServiceInstance' })).rejects.toMatchObject({
        kind: 'Unreachable',
        code: 'Timeout',
      });
    } finally {
      await client.close();
    }
  });

  it('reports a port nobody listens on as Unreachable with code ECONNREFUSED', async () => {
    const port = await closedPort();
    await expect(VsphereClient.connect({ ...options, endpoint: `https://127.0.0.1:${port}/sdk` })).rejects.toMatchObject({
      kind: 'Unreachable',
      code: 'ECONNREFUSED',
    });
  });

  it('rejects an endpoint that is not https before connecting', async () => {
    await expect(VsphereClient.connect({ ...options, endpoint: sim.url.replace('https:', 'http:') })).rejects.toThrow(TypeError);
  });
});

describe('vSphere TLS verification', () => {
  let otherCaPem: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banlieue-other-ca-'));
    try {
      otherCaPem = (await makeServingFiles(dir, 'some-other-ca')).caPem;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('accepts the server when caPem holds the CA that signed its certificate', async () => {
    const client = await VsphereClient.connect(options);
    await client.close();
  });

  it('refuses the server when caPem holds a different CA, as Unreachable with the TLS code', async () => {
    const error = await VsphereClient.connect({ ...options, caPem: otherCaPem }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BackendError);
    expect(error).toMatchObject({ kind: 'Unreachable', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
  });

  it('refuses a server whose CA is not among the default roots when no caPem is given', async () => {
    const { caPem: _ignored, ...noBundle } = options;
    await expect(VsphereClient.connect(noBundle)).rejects.toMatchObject({
      kind: 'Unreachable',
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    });
  });

  it('connects whatever the certificate with insecureSkipTLSVerify', async () => {
    const client = await VsphereClient.connect({ ...options, caPem: otherCaPem, insecureSkipTLSVerify: true });
    await client.close();
  });

  it('rejects a caPem without a certificate before connecting', async () => {
    await expect(VsphereClient.connect({ ...options, caPem: 'not a certificate' })).rejects.toThrow(/caPem holds no PEM certificate/);
  });
});

/** A loopback port that was free a moment ago and has no listener now. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
