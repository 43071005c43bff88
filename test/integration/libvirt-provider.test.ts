// `banlieue provider libvirt` against a private libvirtd (test driver) and
// the real API server: a Provider publishes its host's one failure domain,
// reports reachability over TLS, SSH and TCP, and recovers from a wrong
// client certificate, a wrong SSH key or an unreachable host once the Secret
// (or the host) is fixed, without a restart. VMImage rows for pool volumes.
import { createServer, connect, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { clusterAdmin, kubectlAs } from '../support/tenant.js';
import { ALLOW_INSECURE_TRANSPORT_LABEL } from '../../infra/install/insecure-transport-policy.js';
import { anchorClient, makeImageVolume, TEST_NETWORK, TEST_POOL } from '../support/libvirt/env.js';
import { createTestPki } from '../support/test-pki.js';
import { waitFor } from '../support/wait.js';
import { LOOPBACK, freePort, startLibvirtd, type Libvirtd } from '../peers/libvirt/libvirtd.js';
import { startSshd, type Sshd } from '../peers/libvirt/sshd.js';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

describe('libvirt provider role', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  let daemon: Libvirtd;
  let sshd: Sshd;
  let anchor: LibvirtClient;
  let role: RoleProcess;

  const secret = (name: string, data: Record<string, string>): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns },
    stringData: data,
  });
  const provider = (name: string, endpoint: string, extra: Record<string, unknown> = {}): Obj => ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: ns },
    spec: {
      providerClassRef: { name: 'libvirt' },
      connection: { endpoint, credentialsRef: { name: `${name}-creds` }, ...extra },
      capabilities: {
        features: ['nestedVirtualization'],
        storageClasses: [
          { name: 'fast', target: { pool: TEST_POOL } },
          { name: 'nowhere', target: { pool: 'no-such-pool' } },
        ],
        networkClasses: [
          { name: 'lan', target: { network: TEST_NETWORK } },
          { name: 'servers', target: { bridge: 'br-servers' } },
          { name: 'missing', target: { network: 'no-such-network' } },
        ],
      },
    },
  });
  const tlsEndpoint = (): string => `test+tls://${LOOPBACK}:${daemon.tlsPort}/default`;
  const tlsSecret = (cert: { certPem: string; keyPem: string }): Obj => secret('kvm-tls-creds', { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem });
  const conditionOf = (o: Obj, type: string): Condition | undefined => (o.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('libvirt-prov'));
    daemon = await startLibvirtd();
    sshd = await startSshd(daemon.namespace, daemon.dir);
    anchor = await anchorClient(daemon);
    role = await startRole(['provider', 'libvirt', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns, '--rediscover-period', '2']);
  }, 240_000);

  afterAll(async () => {
    await role?.stop();
    await anchor?.close();
    await sshd?.stop();
    await daemon?.stop();
    await removeNs?.();
  });

  it('reports SecretMissing until the credentials Secret exists', async () => {
    const p = await t.apply(provider('kvm-tls', tlsEndpoint(), { caBundle: { inline: daemon.pki.caPem } }));
    await t.condition(p, 'ProviderReachable', 'False', 'SecretMissing', 60_000);
  });

  it('publishes one failure domain for the host: labelled with its hostname, its pools and networks checked, its capacity in raw', async () => {
    await t.apply(tlsSecret(daemon.client));
    const ready = await t.condition(provider('kvm-tls', tlsEndpoint()), 'Ready', 'True', 'CapabilitiesIncomplete', 60_000);
    expect(conditionOf(ready, 'Ready')?.message).toBe('1 failure domain; usable in none: storage class nowhere, network class missing');
    const hostname = await anchor.host.hostname();
    const [fd, ...others] = ready.status?.failureDomains as { name: string; labels: Record<string, string>; attributes: Record<string, unknown> }[];
    expect(others).toEqual([]);
    expect(fd).toMatchObject({
      name: 'kvm-tls',
      labels: { name: 'kvm-tls', hostname },
      attributes: {
        availableStorageClasses: ['fast'],
        availableNetworkClasses: ['lan', 'servers'],
        features: ['nestedVirtualization'],
        raw: { hostname, domainType: 'kvm', bridges: 'br-servers', pools: TEST_POOL, networks: TEST_NETWORK, cpus: '16', [`availableGiB.${TEST_POOL}`]: '100' },
      },
    });
    expect(Number((fd?.attributes.raw as Record<string, string>).memoryMiB)).toBeGreaterThan(0);
  });

  it('reports ConnectFailed for a client certificate the host does not trust, and recovers once the Secret is fixed, without a restart', async () => {
    const stranger = await createTestPki(daemon.dir, 'someone-else-ca').then((pki) => pki.issueClient('stranger', 'stranger'));
    await t.apply(tlsSecret(stranger));
    const down = await t.condition(provider('kvm-tls', tlsEndpoint()), 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    expect(conditionOf(down, 'ProviderReachable')?.message).toMatch(/certificate|TLS|refused/i);
    expect(JSON.stringify(down.status)).not.toContain('PRIVATE KEY');
    // The failure domain stays published: placed machines stay placed.
    expect(down.status?.failureDomains).toHaveLength(1);
    await t.apply(tlsSecret(daemon.client));
    await t.condition(provider('kvm-tls', tlsEndpoint()), 'ProviderReachable', 'True', 'Reconciled', 60_000);
    expect(role.child.exitCode).toBeNull();
  });

  it('names the keys a Secret lacks for its transport', async () => {
    // Replaced, not applied over: keys an apply leaves out of stringData stay in data.
    await t.delete(secret('kvm-tls-creds', {}));
    await t.apply(secret('kvm-tls-creds', { 'tls.crt': daemon.client.certPem }));
    const down = await t.condition(provider('kvm-tls', tlsEndpoint()), 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    expect(conditionOf(down, 'ProviderReachable')?.message).toContain('the credentials Secret lacks tls.key');
    await t.apply(tlsSecret(daemon.client));
    await t.condition(provider('kvm-tls', tlsEndpoint()), 'ProviderReachable', 'True', 'Reconciled', 60_000);
  });

  it('connects over SSH; a key sshd refuses is ConnectFailed until the Secret holds the right one', async () => {
    const endpoint = `test+ssh://${sshd.user}@${LOOPBACK}:${sshd.port}/default`;
    const sshSecret = (key: string): Obj => secret('kvm-ssh-creds', { 'ssh-privatekey': key, 'ssh-host-key-fingerprint': sshd.hostKeyFingerprint });
    await t.apply(sshSecret(sshd.strangerKeyPem));
    const down = await t.condition(await t.apply(provider('kvm-ssh', endpoint)), 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    expect(conditionOf(down, 'ProviderReachable')?.message).toMatch(/refused the key/);
    await t.apply(sshSecret(sshd.clientKeyPem));
    const up = await t.condition(provider('kvm-ssh', endpoint), 'Ready', 'True', 'CapabilitiesIncomplete', 60_000);
    expect((up.status?.failureDomains as { name: string }[]).map((fd) => fd.name)).toEqual(['kvm-ssh']);
    await t.delete(provider('kvm-ssh', endpoint));
  });

  it('reports an unreachable host as ConnectFailed and recovers when it answers again', async () => {
    const port = await freePort();
    const endpoint = `test+tcp://${LOOPBACK}:${port}/default`;
    // libvirt's tcp transport has neither authentication nor encryption: a cluster admin opts the namespace in.
    const optIn = await kubectlAs(clusterAdmin, ['label', 'namespace', ns, `${ALLOW_INSECURE_TRANSPORT_LABEL}=true`, '--overwrite']);
    expect(optIn.code, optIn.stderr).toBe(0);
    await t.apply(secret('kvm-tcp-creds', {}));
    const down = await t.condition(await t.apply(provider('kvm-tcp', endpoint)), 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    expect(conditionOf(down, 'ProviderReachable')?.message).toMatch(/ECONNREFUSED|refused/);
    // The host comes back on that address (a relay to the daemon's TCP port).
    const relay = await listenRelay(port, daemon.tcpPort);
    try {
      await t.condition(provider('kvm-tcp', endpoint), 'ProviderReachable', 'True', 'Reconciled', 60_000);
    } finally {
      await t.delete(provider('kvm-tcp', endpoint));
      await t.gone(provider('kvm-tcp', endpoint));
      relay.close();
    }
  });

  it('writes its VMImage rows: a volume found in a class’s pool is ready as pool/volume, a missing one ImageSourceNotFound, a Url UnsupportedSource', async () => {
    await makeImageVolume(anchor, await anchor.pools.lookupByName(TEST_POOL), `image-${ns}.qcow2`);
    const image = (name: string, source: Record<string, string>): Obj => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name },
      spec: { osFamily: 'linux', osDistribution: 'debian', osVersion: '12', architecture: 'amd64', sources: [{ providerClass: 'libvirt', ...source }] },
    });
    const rowOf = (name: string): Promise<Record<string, unknown>> =>
      waitFor(
        `the row of ${name}`,
        async () => {
          const rows = (await t.get(image(name, {})))?.status?.perProvider as Record<string, unknown>[] | undefined;
          const row = rows?.find((r) => r.providerNamespace === ns && r.providerName === 'kvm-tls');
          return row && (row.ready === true || row.reason !== undefined) ? row : undefined;
        },
        60_000,
      );
    const images = {
      [`found-${ns}`]: { kind: 'BackingFile', ref: `image-${ns}.qcow2` },
      [`missing-${ns}`]: { kind: 'BackingFile', ref: 'no-such-volume.qcow2' },
      [`url-${ns}`]: { kind: 'Url', ref: 'https://images.example.com/debian-12.qcow2' },
    };
    for (const [name, source] of Object.entries(images)) await t.apply(image(name, source));
    expect(await rowOf(`found-${ns}`)).toMatchObject({ ready: true, resolvedRef: `${TEST_POOL}/image-${ns}.qcow2` });
    expect(await rowOf(`missing-${ns}`)).toMatchObject({ ready: false, reason: 'ImageSourceNotFound' });
    expect(await rowOf(`url-${ns}`)).toMatchObject({ ready: false, reason: 'UnsupportedSource' });
    for (const name of Object.keys(images)) await t.delete(image(name, {}));
  });
});

/** A TCP relay on 127.0.0.1:`port` to `target`: the host answering again. */
function listenRelay(port: number, target: number): Promise<Server> {
  const server = createServer((socket) => {
    const upstream = connect({ host: LOOPBACK, port: target });
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, LOOPBACK, () => resolve(server));
  });
}
