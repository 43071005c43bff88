// The Cluster API v1beta2 contract on libvirt: one MachineDeployment of
// LibvirtMachines provisioned by `banlieue provider libvirt` (as its
// ServiceAccount, with the RBAC clusterctl's components give it) on a private
// libvirtd's test driver reached over mutual TLS, as capi-contract.test.ts
// does on vcsim; and a Cluster of a ClusterClass over LibvirtClusterTemplate
// and LibvirtMachineTemplate, rolled to a new machine template
// (capi-clusterclass-journey.ts). The real CAPI manager and clusterctl; a
// control plane of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import type { StoragePool } from '../../controller/backends/libvirt/client/handles.js';
import { ownerMarkOf } from '../../controller/backends/libvirt/machine/domain-xml.js';
import { libvirtApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { startLibvirtd, type Libvirtd } from '../peers/libvirt/libvirtd.js';
import { anchorClient, IMAGE_VOLUME, libvirtWorld, makeImageVolume, TEST_NETWORK, TEST_POOL } from '../support/libvirt/world.js';
import { waitFor } from '../support/wait.js';
import { clusterClassJourney, installPlayedProviders, type ClusterClassJourney, type PeerVm } from './capi-clusterclass-journey.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, workersDeployment } from './capi-objects.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-libvirt';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Machines provisioned by `banlieue provider libvirt` (libvirtd test driver)', () => {
  let env: CapiEnvironment;
  let daemon: Libvirtd;
  let anchor: LibvirtClient;
  let pool: StoragePool;
  const bootstrap = '#cloud-config\nruncmd: [kubeadm join]\n';
  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      () => undefined,
    );
  const apply = (obj: Json, fieldManager = 'e2e'): Promise<string> =>
    env.kubectl(['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], JSON.stringify(obj));
  const machines = async (): Promise<Json[]> => (JSON.parse(await env.kubectl(['get', 'libvirtmachines', '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
  const uuidOf = (providerID: string): string => providerID.replace(/^libvirt:\/\//, '');
  /** The domain libvirtd has under the providerID's UUID, with its memory (`<memory unit='KiB'>`, as libvirt writes it back). */
  const domainOf = async (providerID: string): Promise<PeerVm | undefined> => {
    const domain = await anchor.domains.lookupByUuid(uuidOf(providerID)).catch(() => undefined);
    if (!domain) return undefined;
    const memory = /<memory unit='KiB'>(\d+)<\/memory>/.exec(await anchor.domains.xmlDesc(domain));
    if (!memory?.[1]) throw new Error(`domain ${uuidOf(providerID)}: no <memory unit='KiB'> in its XML`);
    return { memoryMiB: Number(memory[1]) / 1024 };
  };

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    daemon = await startLibvirtd();
    anchor = await anchorClient(daemon);
    pool = await anchor.pools.lookupByName(TEST_POOL);
    await makeImageVolume(anchor, pool);
    await env.kubectl(['create', 'namespace', NS]);
    const world = libvirtWorld(NS, daemon, 'capi');
    await apply(world.secret);
    await apply(world.provider);
    // The template its machines clone, published to them as an image by a VMImage.
    await apply(world.vmImage);
    await env.startProvider('libvirt', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5']);
    await waitFor(
      'the Provider to discover its host',
      async () => ((await get('provider', 'kvm1'))?.status?.failureDomains?.length === 1 ? true : undefined),
      120_000,
    );
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'workers-bootstrap', namespace: NS },
      stringData: { value: bootstrap, format: 'cloud-config' },
    });
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
    await anchor?.close();
    await daemon?.stop();
  });

  it('provisions a MachineDeployment: domains defined with the machines’ UUIDs, providerID and addresses on the Machines', async () => {
    await apply({
      apiVersion: INFRA,
      kind: 'LibvirtCluster',
      metadata: { name: 'lv-work', namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.0.2.70', port: 6443 }, providerRefs: [{ name: 'kvm1' }] },
    });
    await apply(capiCluster(NS, 'lv-work', 'LibvirtCluster'));
    await apply({
      apiVersion: INFRA,
      kind: 'LibvirtMachineTemplate',
      metadata: { name: 'workers', namespace: NS },
      spec: {
        template: {
          spec: {
            pool: TEST_POOL,
            bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
            vcpus: 2,
            memoryMiB: 2048,
            disks: [{ name: 'os', sizeGiB: 2 }],
            network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
          },
        },
      },
    });
    await apply(workersDeployment(NS, 'lv-work', 2, 'LibvirtMachineTemplate'));

    const provisioned = await waitFor(
      'two LibvirtMachines with a providerID and a domain',
      async () => {
        const list = (await machines()).filter((m) => typeof m.spec.providerID === 'string' && m.status?.initialization?.provisioned === true);
        if (list.length !== 2) return undefined;
        const domains = await Promise.all(list.map((m) => anchor.domains.lookupByUuid(uuidOf(m.spec.providerID as string)).catch(() => undefined)));
        return domains.every((d) => d) ? list : undefined;
      },
      240_000,
    );
    const capiMachines = await waitFor(
      'the Machines to take providerID and addresses from their LibvirtMachines',
      async () => {
        const list = (JSON.parse(await env.kubectl(['get', 'machines.cluster.x-k8s.io', '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
        return list.length === 2 &&
          list.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID && m.status.addresses?.length === 1)
          ? list
          : undefined;
      },
      180_000,
    );
    // Read again: the Machine's ownerRef may have come after the provider's first pass.
    const byProviderId = new Map((await machines()).map((m) => [m.spec.providerID as string, m]));
    expect(byProviderId.size).toBe(provisioned.length);
    for (const m of capiMachines) {
      const infra = byProviderId.get(m.spec.providerID as string);
      expect(infra, `Machine ${m.metadata.name as string} providerID ${m.spec.providerID as string}`).toBeDefined();
      // The domain's UUID is the infra machine's own UID's (no VirtualMachine in between), its mark the machine's.
      expect(infra?.metadata.ownerReferences.some((r: Json) => r.kind === 'Machine' && r.controller)).toBe(true);
      const domain = await anchor.domains.lookupByUuid(uuidOf(m.spec.providerID as string));
      expect(domain.name).toBe(`${NS}-${infra?.metadata.name as string}`);
      expect(ownerMarkOf(await anchor.domains.xmlDesc(domain))).toBe(`LibvirtMachine/${NS}/${infra?.metadata.name as string}`);
      // The test driver's lease source.
      expect(m.status.addresses[0].address).toMatch(/^192\.168\.122\.\d+$/);
      expect(infra?.status?.failureDomain).toBe('kvm1');
    }
  }, 420_000);

  it('scaling the MachineDeployment to zero undefines the domains and deletes their volumes', async () => {
    const before = (await machines()).map((m) => uuidOf(m.spec.providerID as string));
    expect(before).toHaveLength(2);
    await env.kubectl(['patch', 'machinedeployment', 'workers', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { replicas: 0 } })]);
    await waitFor('the LibvirtMachines to go', async () => ((await machines()).length === 0 ? true : undefined), 180_000);
    for (const uuid of before) {
      await expect(anchor.domains.lookupByUuid(uuid)).rejects.toThrow(/not found|no domain/i);
      expect((await anchor.pools.listVolumes(pool)).filter((v) => v.name.startsWith(`${uuid}-`))).toEqual([]);
    }
  }, 240_000);

  describe('a Cluster of a ClusterClass over LibvirtClusterTemplate and LibvirtMachineTemplate', () => {
    let journey: ClusterClassJourney;

    beforeAll(async () => {
      await installPlayedProviders(env);
      journey = clusterClassJourney({
        env,
        ns: NS,
        backend: libvirtApi,
        clusterTemplateSpec: { providerRefs: [{ name: 'kvm1' }] },
        workerSpec: (memoryMiB) => ({
          pool: TEST_POOL,
          bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
          vcpus: 1,
          memoryMiB,
          disks: [{ name: 'os', sizeGiB: 2 }],
          network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
        }),
        vmOf: domainOf,
        endpoint: { host: '192.0.2.71', port: 6443 },
      });
    }, 120_000);

    it('provisions the Cluster: CAPI creates the LibvirtCluster and the MachineDeployment, banlieue the domains', async () => {
      await journey.provision();
    }, 400_000);

    it('rolls the MachineDeployment to new domains when the class names a new machine template', async () => {
      await journey.rollToNewTemplate();
    }, 400_000);
  });
});
