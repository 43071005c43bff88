// InfraClusters and VMImage readiness: the controller aggregates what
// Providers publish, for CAPI and for users.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControllerNamespace } from '../support/kube.js';
import { INFRA, TestApi, failureDomains, imageRows, provider, vmImage, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

const cluster = (kind: string, ns: string, name: string, spec: Record<string, unknown>): Obj => ({
  apiVersion: INFRA,
  kind,
  metadata: { name, namespace: ns },
  spec,
});

describe('InfraCluster and VMImage aggregation', () => {
  const t = new TestApi();
  let ns: string;
  let stopNamespace: () => Promise<void>;

  beforeAll(async () => {
    ({ ns, stop: stopNamespace } = await startControllerNamespace('clusters'));
    // Two vCenters, three compute clusters each.
    for (const vc of ['vcenter-a', 'vcenter-b']) {
      const p = await t.apply(provider(ns, vc, 'vsphere', { site: 'paris' }));
      await t.applyStatus(
        p,
        failureDomains(
          'vsphere',
          ['c1', 'c2', 'c3'].map((c) => ({ name: `${vc}-dc1-${c}`, labels: { datacenter: 'dc1', cluster: c } })),
        ),
      );
    }
    // One Provider of every other backend, all labelled alike: each InfraCluster kind must see only its own.
    const lab = [
      ['lab', 'libvirt', 'lab'],
      ['pve', 'proxmox', 'pve-1'],
      ['ch-host', 'cloud-hypervisor', 'ch-1'],
    ] as const;
    for (const [name, backend, fd] of lab) {
      const p = await t.apply(provider(ns, name, backend, { site: 'lab' }));
      await t.applyStatus(p, failureDomains(backend, [{ name: fd }]));
    }
  });

  afterAll(async () => {
    await stopNamespace?.();
  });

  it('publishes six failure domains for a VSphereCluster over two Providers, control plane per selector', async () => {
    const c = await t.apply(
      cluster('VSphereCluster', ns, 'prod', {
        controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 },
        providerRefs: [{ name: 'vcenter-a' }, { name: 'vcenter-b' }],
        controlPlaneFailureDomainSelector: { matchExpressions: [{ key: 'cluster', operator: 'In', values: ['c1', 'c2'] }] },
      }),
    );
    const ready = await t.condition(c, 'Ready', 'True', 'Reconciled');
    const fds = ready.status?.failureDomains as { name: string; controlPlane: boolean; attributes: Record<string, string> }[];
    expect(fds.map((f) => f.name)).toEqual([
      'vcenter-a-dc1-c1',
      'vcenter-a-dc1-c2',
      'vcenter-a-dc1-c3',
      'vcenter-b-dc1-c1',
      'vcenter-b-dc1-c2',
      'vcenter-b-dc1-c3',
    ]);
    expect(fds.filter((f) => f.controlPlane).map((f) => f.name)).toEqual(['vcenter-a-dc1-c1', 'vcenter-a-dc1-c2', 'vcenter-b-dc1-c1', 'vcenter-b-dc1-c2']);
    expect(fds[0]?.attributes).toMatchObject({ provider: 'vcenter-a', cluster: 'c1' });
    expect(ready.status).toMatchObject({ initialization: { provisioned: true }, controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } });
  });

  it.each([
    ['ProxmoxCluster', 'pve', 'pve-1'],
    ['LibvirtCluster', 'lab', 'lab'],
    ['CloudHypervisorCluster', 'ch-host', 'ch-1'],
  ])('aggregates for a %s chosen by provider selector only the Provider of its backend (%s) among several backends', async (kind, providerName, fd) => {
    const c = await t.apply(cluster(kind, ns, `sel-${kind.toLowerCase()}`, { providerSelector: { matchLabels: { site: 'lab' } } }));
    const ready = await t.condition(c, 'Ready', 'True');
    expect(ready.status?.failureDomains).toEqual([{ name: fd, controlPlane: true, attributes: { name: fd, provider: providerName } }]);
  });

  it.each([
    ['VSphereCluster', ['vcenter-a-dc1-c1', 'vcenter-a-dc1-c2', 'vcenter-a-dc1-c3', 'vcenter-b-dc1-c1', 'vcenter-b-dc1-c2', 'vcenter-b-dc1-c3']],
    ['ProxmoxCluster', ['pve-1']],
    ['LibvirtCluster', ['lab']],
    ['CloudHypervisorCluster', ['ch-1']],
  ])("publishes on a %s with neither providerRefs nor providerSelector only its backend's failure domains", async (kind, expected) => {
    const c = await t.apply(cluster(kind, ns, `all-${kind.toLowerCase()}`, {}));
    const ready = await t.condition(c, 'Ready', 'True');
    expect((ready.status?.failureDomains as { name: string }[]).map((f) => f.name)).toEqual(expected);
  });

  it('follows Provider changes through the watch', async () => {
    const c = await t.apply(cluster('LibvirtCluster', ns, 'grows', { providerRefs: [{ name: 'lab' }] }));
    await t.condition(c, 'Ready', 'True');
    const lab = await t.get({ apiVersion: 'banlieue.io/v1alpha1', kind: 'Provider', metadata: { name: 'lab', namespace: ns } });
    await t.applyStatus(lab as Obj, failureDomains('libvirt', [{ name: 'lab' }, { name: 'lab-2' }]));
    await waitFor('two failure domains', async () => ((await t.get(c))?.status?.failureDomains?.length === 2 ? true : undefined));
  });

  it('reports NoProviders and honours the cluster.x-k8s.io/paused annotation', async () => {
    const c = await t.apply(cluster('ProxmoxCluster', ns, 'empty', { providerRefs: [{ name: 'missing' }] }));
    await t.condition(c, 'Ready', 'False', 'NoProviders');
    await t.patch(c, { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } });
    await t.condition(c, 'Paused', 'True', 'Paused');
  });

  it('aggregates VMImage readiness from the rows providers write', async () => {
    const img = await t.apply(vmImage(`agg-${Math.random().toString(36).slice(2, 7)}`));
    await t.applyStatus(
      img,
      imageRows([
        { ns, provider: 'vcenter-a', ready: true },
        { ns, provider: 'vcenter-b', ready: false, reason: 'TemplateNotFound' },
      ]),
    );
    const notReady = await t.condition(img, 'Ready', 'False', 'ImageNotReadyOnProvider');
    expect(JSON.stringify(notReady.status?.conditions)).toContain('vcenter-b');
    await t.applyStatus(
      img,
      imageRows([
        { ns, provider: 'vcenter-a', ready: true },
        { ns, provider: 'vcenter-b', ready: true },
      ]),
    );
    await t.condition(img, 'Ready', 'True', 'Reconciled');
    await t.delete(img);
  });
});
