// `banlieue provider proxmox` against the schema-held PVE simulator and the
// real API server: a Provider over a 3-node cluster gets one failure domain per
// node with the classes each node reaches, a node going offline drops out,
// a bad token is ConnectFailed and recovers once the Secret is fixed (no
// restart), and the template VMImage rows say which template is usable.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { waitFor } from '../support/wait.js';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';

interface FailureDomain {
  name: string;
  labels: Record<string, string>;
  attributes: { raw: Record<string, string>; availableStorageClasses: string[]; availableNetworkClasses: string[] };
}

describe('Proxmox provider role', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  let sim: ProxmoxSim;
  let role: RoleProcess;

  const secret = (tokenSecret: string): Obj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'pve-token', namespace: ns },
    stringData: { tokenID: sim.token.tokenID, tokenSecret },
  });
  const provider = (): Obj => ({
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'lab', namespace: ns },
    spec: {
      providerClassRef: { name: 'proxmox' },
      connection: { endpoint: sim.url, credentialsRef: { name: 'pve-token' }, caBundle: { inline: sim.caPem } },
      capabilities: {
        storageClasses: [
          { name: 'local-thin', target: { storage: 'local-lvm' } },
          { name: 'shared', target: { storage: 'ceph' } },
          { name: 'nowhere', target: { storage: 'no-such-storage' } },
        ],
        networkClasses: [
          { name: 'lan', target: { bridge: 'vmbr0' } },
          { name: 'tagged', target: { bridge: 'vmbr0', vlan: '20' } },
          // vmbr1 is not VLAN-aware: a tag cannot work there.
          { name: 'untaggable', target: { bridge: 'vmbr1', vlan: '30' } },
        ],
      },
    },
  });
  const domains = async (): Promise<FailureDomain[]> => ((await t.get(provider()))?.status?.failureDomains ?? []) as FailureDomain[];

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('pve-provider'));
    // ceph on pve1 and pve2 only: its class is available on two of the three nodes.
    sim = await startProxmoxSim({
      storages: [
        { id: 'local', type: 'dir', content: ['iso', 'vztmpl'], shared: false, totalBytes: 1024 ** 4, enabled: true },
        { id: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'], shared: false, totalBytes: 1024 ** 4, enabled: true },
        { id: 'ceph', type: 'rbd', content: ['images'], shared: true, nodes: ['pve1', 'pve2'], totalBytes: 1024 ** 4, enabled: true },
      ],
    });
    role = await startRole(['provider', 'proxmox', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns, '--rediscover-period', '2']);
  }, 120_000);

  afterAll(async () => {
    await role?.stop();
    await sim?.stop();
    await removeNs?.();
  });

  it('reports SecretMissing until the token Secret exists', async () => {
    await t.apply(provider());
    await t.condition(provider(), 'ProviderReachable', 'False', 'SecretMissing', 60_000);
  });

  it('discovers one failure domain per node, with the classes each node reaches', async () => {
    await t.apply(secret(sim.token.tokenSecret));
    const ready = await t.condition(provider(), 'Ready', 'True', 'CapabilitiesIncomplete', 60_000);
    const message = (ready.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Ready')?.message;
    expect(message).toBe('3 failure domains; usable in none: storage class nowhere, network class untaggable');
    const fds = await domains();
    expect(fds.map((fd) => fd.name)).toEqual(['lab-pve1', 'lab-pve2', 'lab-pve3']);
    for (const fd of fds) {
      const node = fd.attributes.raw.node ?? '';
      expect(fd.labels).toEqual({ name: fd.name, node, cluster: 'banlieue-sim' });
      expect(fd.attributes.availableStorageClasses).toEqual(node === 'pve3' ? ['local-thin'] : ['local-thin', 'shared']);
      expect(fd.attributes.availableNetworkClasses).toEqual(['lan', 'tagged']);
      expect(fd.attributes.raw).toMatchObject({
        node,
        datacenter: 'banlieue-sim',
        isoStorage: 'local',
        'vlan.tagged': '20',
        cpus: '16',
        memoryGiB: '64',
        version: '9.1.1',
      });
    }
  });

  it('drops a node that goes offline and takes it back when it returns', async () => {
    sim.state.setNodeOnline('pve2', false);
    try {
      await waitFor('pve2 to drop out', async () => ((await domains()).map((fd) => fd.name).join() === 'lab-pve1,lab-pve3' ? true : undefined), 60_000);
    } finally {
      sim.state.setNodeOnline('pve2', true);
    }
    await waitFor('pve2 to come back', async () => ((await domains()).length === 3 ? true : undefined), 60_000);
  });

  it('reports ConnectFailed for a bad token, and recovers once the Secret is fixed, without a restart', async () => {
    await t.apply(secret('not-the-secret'));
    const down = await t.condition(provider(), 'ProviderReachable', 'False', 'ConnectFailed', 60_000);
    const reason = (down.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'ProviderReachable')?.message ?? '';
    expect(reason).toContain('HTTP 401 authentication failure');
    expect(JSON.stringify(down.status)).not.toContain('not-the-secret');
    // What was published stays: placed VMs stay placed.
    expect(down.status?.failureDomains).toHaveLength(3);
    await t.apply(secret(sim.token.tokenSecret));
    await t.condition(provider(), 'ProviderReachable', 'True', 'Reconciled', 60_000);
    expect(role.child.exitCode).toBeNull();
  });

  it('writes its VMImage rows: a template is ready, a VM or a missing VMID is ImageSourceNotFound', async () => {
    sim.state.addVm({ vmid: 150, node: 'pve1', name: 'not-a-template' });
    const image = (name: string, ref: string): Obj => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name },
      spec: {
        osFamily: 'linux',
        osDistribution: 'ubuntu',
        osVersion: '24.04',
        architecture: 'amd64',
        sources: [{ providerClass: 'proxmox', kind: 'Template', ref }],
      },
    });
    const rowOf = async (name: string): Promise<Record<string, unknown> | undefined> =>
      ((await t.get(image(name, '100')))?.status?.perProvider as Record<string, unknown>[] | undefined)?.find(
        (r) => r.providerNamespace === ns && r.providerName === 'lab',
      );
    const names = { template: `pve-tmpl-${ns}`, vm: `pve-vm-${ns}`, missing: `pve-missing-${ns}` };
    await t.apply(image(names.template, '9000'));
    await t.apply(image(names.vm, '150'));
    await t.apply(image(names.missing, '4242'));
    const row = (name: string): Promise<Record<string, unknown>> =>
      waitFor(
        `the row of ${name}`,
        async () => {
          const r = await rowOf(name);
          return r?.ready === true || r?.reason ? r : undefined;
        },
        60_000,
      );
    expect(await row(names.template)).toMatchObject({ ready: true, resolvedRef: '9000' });
    expect(await row(names.vm)).toMatchObject({ ready: false, reason: 'ImageSourceNotFound', message: expect.stringContaining('not a template') });
    expect(await row(names.missing)).toMatchObject({ ready: false, reason: 'ImageSourceNotFound' });
    for (const name of Object.values(names)) await t.delete(image(name, '100'));
  });

  it('made no call the PVE schema refuses', () => {
    expect(sim.violations).toEqual([]);
  });
});
