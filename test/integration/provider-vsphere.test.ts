// `banlieue provider vsphere` against vcsim and the real API server: a
// Provider discovers its failure domains, reports reachability, and recovers
// from wrong credentials or a wrong CA without a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeServingFiles } from '../support/test-pki.js';
import { makeTemplate, vcsimClient } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

describe('vSphere provider role', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  let vcsim: Vcsim;
  let role: RoleProcess;

  const secret = (password: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'vcsim-creds', namespace: ns },
    stringData: { username: vcsim.username, password },
  });
  const provider = (caPem: string): Obj => ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'vcsim', namespace: ns },
    spec: {
      providerClassRef: { name: 'vsphere' },
      connection: { endpoint: vcsim.url, credentialsRef: { name: 'vcsim-creds' }, caBundle: { inline: caPem } },
      capabilities: {
        features: ['hotAddCPU'],
        storageClasses: [
          { name: 'local', target: { datastore: 'LocalDS_0' } },
          { name: 'nowhere', target: { datastore: 'no-such-datastore' } },
        ],
        networkClasses: [
          { name: 'vm-network', target: { portGroup: 'VM Network' } },
          // Distributed port groups are per datacenter in vcsim: DC0's reaches DC0's clusters only.
          { name: 'dc0-dvpg', target: { distributedPortGroup: 'DC0_DVPG0' } },
          // A distributed port group is not a standard one.
          { name: 'wrong-kind', target: { portGroup: 'DC0_DVPG0' } },
        ],
      },
    },
  });

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('vsphere'));
    vcsim = await startVcsim({ datacenters: 2, clusters: 2 });
    role = await startRole(['provider', 'vsphere', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns, '--rediscover-period', '2']);
  }, 120_000);

  afterAll(async () => {
    await role?.stop();
    await vcsim?.stop();
    await removeNs?.();
  });

  it('reports SecretMissing until the credentials Secret exists', async () => {
    const p = await t.apply(provider(vcsim.caPem));
    await t.condition(p, 'ProviderReachable', 'False', 'SecretMissing');
  });

  it('discovers one failure domain per (datacenter, cluster) and becomes Ready', async () => {
    await t.apply(secret(vcsim.password));
    // Ready, and saying which declared classes no failure domain offers.
    const ready = await t.condition(provider(vcsim.caPem), 'Ready', 'True', 'CapabilitiesIncomplete');
    const message = (ready.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Ready')?.message;
    expect(message).toBe('4 failure domains; usable in none: storage class nowhere, network class wrong-kind');
    const fds = ready.status?.failureDomains as {
      name: string;
      labels: Record<string, string>;
      attributes: { raw: Record<string, string>; features?: string[]; availableStorageClasses: string[]; availableNetworkClasses: string[] };
    }[];
    expect(fds).toHaveLength(4);
    for (const fd of fds) {
      expect(fd.name).toMatch(/^vcsim-/);
      expect(fd.labels).toMatchObject({ name: fd.name, datacenter: fd.attributes.raw.datacenter, cluster: fd.attributes.raw.cluster });
      expect(fd.attributes.features).toEqual(['hotAddCPU']);
      expect(fd.attributes.availableStorageClasses).toEqual(['local']);
      expect(fd.attributes.availableNetworkClasses).toEqual(fd.attributes.raw.datacenter === 'DC0' ? ['vm-network', 'dc0-dvpg'] : ['vm-network']);
    }
    expect(new Set(fds.map((f) => f.attributes.raw.datacenter)).size).toBe(2);
  });

  it('publishes each cluster’s room for VMs from its hosts’ and datastores’ summaries', async () => {
    const ready = await t.condition(provider(vcsim.caPem), 'Ready', 'True', 'CapabilitiesIncomplete');
    const fds = ready.status?.failureDomains as {
      name: string;
      capacity?: { cpus?: number; memoryMiB?: number; freeMemoryMiB?: number; storage?: { target: string; freeGiB: number; capacityGiB?: number }[] };
    }[];
    for (const fd of fds) {
      const { cpus = 0, memoryMiB = 0, freeMemoryMiB = -1, storage = [] } = fd.capacity ?? {};
      expect(cpus, fd.name).toBeGreaterThan(0);
      expect(memoryMiB, fd.name).toBeGreaterThan(0);
      expect(freeMemoryMiB, fd.name).toBeGreaterThanOrEqual(0);
      expect(freeMemoryMiB, fd.name).toBeLessThanOrEqual(memoryMiB);
      // vcsim's cluster datastore: a whole number of GiB, some of it free.
      const local = storage.find((s) => s.target === 'LocalDS_0');
      expect(local?.capacityGiB, fd.name).toBeGreaterThan(0);
      expect(local?.freeGiB, fd.name).toBeGreaterThan(0);
      expect(local?.freeGiB ?? Infinity, fd.name).toBeLessThanOrEqual(local?.capacityGiB ?? 0);
    }
  });

  it('reports ConnectFailed for a wrong password, and recovers once the Secret is fixed, without a restart', async () => {
    await t.apply(secret('wrong-password'));
    const down = await t.condition(provider(vcsim.caPem), 'ProviderReachable', 'False', 'ConnectFailed');
    expect(JSON.stringify(down.status?.conditions)).not.toContain('wrong-password');
    // The failure domains already published stay: placed VMs stay placed.
    expect(down.status?.failureDomains).toHaveLength(4);
    await t.apply(secret(vcsim.password));
    await t.condition(provider(vcsim.caPem), 'ProviderReachable', 'True', 'Reconciled');
    expect(role.child.exitCode).toBeNull();
  });

  it('writes its VMImage rows: a template found is ready, a missing one is ImageSourceNotFound', async () => {
    // A template in vcsim, made the way an image pipeline would.
    const client = await vcsimClient(vcsim);
    await makeTemplate(client, `ubuntu-${ns}`).finally(() => client.close());
    const image = (name: string, ref: string): Obj => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name },
      spec: {
        osFamily: 'linux',
        osDistribution: 'ubuntu',
        osVersion: '24.04',
        architecture: 'amd64',
        sources: [{ providerClass: 'vsphere', kind: 'Template', ref }],
      },
    });
    const rowOf = async (name: string): Promise<Record<string, unknown> | undefined> =>
      ((await t.get(image(name, '')))?.status?.perProvider as Record<string, unknown>[] | undefined)?.find(
        (r) => r.providerNamespace === ns && r.providerName === 'vcsim',
      );
    await t.apply(image(`found-${ns}`, `ubuntu-${ns}`));
    await t.apply(image(`missing-${ns}`, 'no-such-template'));
    const found = await waitFor('a ready row', async () => {
      const row = await rowOf(`found-${ns}`);
      return row?.ready === true ? row : undefined;
    });
    // Resolved to its inventory path: a clone finds it with one lookup.
    expect(found).toMatchObject({ ready: true, resolvedRef: `DC0/vm/ubuntu-${ns}` });
    const missing = await waitFor('a not-ready row', async () => {
      const row = await rowOf(`missing-${ns}`);
      return row?.reason ? row : undefined;
    });
    expect(missing).toMatchObject({ ready: false, reason: 'ImageSourceNotFound' });
    for (const name of [`found-${ns}`, `missing-${ns}`]) await t.delete(image(name, ''));
  });

  it('refuses a CA bundle that did not sign the endpoint certificate, and accepts the right one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banlieue-other-ca-'));
    try {
      const other = await makeServingFiles(dir, 'someone-else');
      await t.apply(provider(other.caPem));
      const refused = await t.condition(provider(vcsim.caPem), 'ProviderReachable', 'False', 'ConnectFailed');
      expect(JSON.stringify(refused.status?.conditions)).toMatch(/certificate|verify|self.signed|issuer/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    await t.apply(provider(vcsim.caPem));
    await t.condition(provider(vcsim.caPem), 'ProviderReachable', 'True', 'Reconciled');
  });
});
