// The Cluster API v1beta2 contract on Proxmox VE: one MachineDeployment of
// ProxmoxMachines provisioned by `banlieue provider proxmox` (as its
// ServiceAccount, with the RBAC clusterctl's components give it) on the
// schema-held PVE simulator, spread by banlieue over the nodes' failure
// domains, as capi-contract.test.ts does on vcsim; and a Cluster of a
// ClusterClass over ProxmoxClusterTemplate and ProxmoxMachineTemplate, rolled
// to a new machine template (capi-clusterclass-journey.ts). The real CAPI
// manager and clusterctl; a control plane of its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxmoxApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import { proxmoxWorld } from '../support/proxmox/world.js';
import { waitFor } from '../support/wait.js';
import { clusterClassJourney, installPlayedProviders, type ClusterClassJourney } from './capi-clusterclass-journey.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, workersDeployment } from './capi-objects.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-proxmox-sim';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Machines provisioned by `banlieue provider proxmox` (PVE simulator)', () => {
  let env: CapiEnvironment;
  let sim: ProxmoxSim;
  const bootstrap = '#cloud-config\nruncmd: [kubeadm join]\n';
  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      () => undefined,
    );
  const apply = (obj: Json, fieldManager = 'e2e'): Promise<string> =>
    env.kubectl(['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], JSON.stringify(obj));
  const machines = async (): Promise<Json[]> => (JSON.parse(await env.kubectl(['get', 'proxmoxmachines', '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
  const vmOf = (providerID: string): ReturnType<ProxmoxSim['state']['vms']['get']> => {
    const uuid = providerID.replace(/^proxmox:\/\//, '');
    return [...sim.state.vms.values()].find((vm) => String(vm.config.smbios1 ?? '').includes(`uuid=${uuid}`));
  };

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    sim = await startProxmoxSim({ taskDelayMs: { qmclone: 500, default: 100 } });
    await env.kubectl(['create', 'namespace', NS]);
    const world = proxmoxWorld(NS, sim, 'capi');
    await apply(world.secret);
    await apply(world.provider);
    // The template its machines clone, published to them as an image by a VMImage.
    await apply(world.vmImage);
    await env.startProvider('proxmox', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5']);
    await waitFor(
      'the Provider to discover the three nodes',
      async () => ((await get('provider', 'pve'))?.status?.failureDomains?.length === 3 ? true : undefined),
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
    await sim?.stop();
  });

  it('provisions a MachineDeployment: one VM per node, providerID and agent addresses on the Machines, bootstrap data on a seed ISO', async () => {
    await apply({
      apiVersion: INFRA,
      kind: 'ProxmoxCluster',
      metadata: { name: 'pve-work', namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.0.2.60', port: 6443 }, providerRefs: [{ name: 'pve' }] },
    });
    await apply(capiCluster(NS, 'pve-work', 'ProxmoxCluster'));
    await apply({
      apiVersion: INFRA,
      kind: 'ProxmoxMachineTemplate',
      metadata: { name: 'workers', namespace: NS },
      // The template on shared storage (9001 on ceph): it clones to every node.
      spec: {
        template: { spec: { templateVmid: 9001, storage: 'ceph', cores: 2, memoryMiB: 2048, osDiskSizeGiB: 20, nics: [{ name: 'eth0', bridge: 'vmbr0' }] } },
      },
    });
    await apply(workersDeployment(NS, 'pve-work', 3, 'ProxmoxMachineTemplate'));

    const provisioned = await waitFor(
      'three ProxmoxMachines with a providerID and a VM',
      async () => {
        const list = (await machines()).filter((m) => typeof m.spec.providerID === 'string' && m.status?.initialization?.provisioned === true);
        return list.length === 3 && list.every((m) => vmOf(m.spec.providerID as string)) ? list : undefined;
      },
      240_000,
    );
    const capiMachines = await waitFor(
      'the Machines to take providerID and addresses from their ProxmoxMachines',
      async () => {
        const list = (JSON.parse(await env.kubectl(['get', 'machines.cluster.x-k8s.io', '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
        return list.length === 3 &&
          list.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID && m.status.addresses?.length === 1)
          ? list
          : undefined;
      },
      180_000,
    );
    const byProviderId = new Map(provisioned.map((m) => [m.spec.providerID as string, m]));
    for (const m of capiMachines) {
      const infra = byProviderId.get(m.spec.providerID as string);
      expect(infra, `Machine ${m.metadata.name as string} providerID ${m.spec.providerID as string}`).toBeDefined();
      expect(infra?.metadata.ownerReferences.some((r: Json) => r.kind === 'Machine' && r.controller)).toBe(true);
      const vm = vmOf(m.spec.providerID as string);
      // The address the simulated agent reports (derived from the VMID).
      expect(m.status.addresses[0].address).toBe(`10.0.${((vm?.vmid ?? 0) >> 8) & 255}.${(vm?.vmid ?? 0) & 255}`);
      // The bootstrap data went on a NoCloud seed ISO on the failure domain's ISO storage.
      const uuid = (m.spec.providerID as string).replace(/^proxmox:\/\//, '');
      expect(vm?.config.ide2).toBe(`local:iso/banlieue-${uuid}.iso,media=cdrom`);
      expect(vm?.node).toBe(infra?.status?.node);
    }
    // Spread by banlieue over the three nodes' failure domains, each VM on the node its domain names.
    expect(new Set(provisioned.map((m) => m.status?.failureDomain)).size).toBe(3);
    expect(new Set(provisioned.map((m) => vmOf(m.spec.providerID as string)?.node))).toEqual(new Set(['pve1', 'pve2', 'pve3']));
  }, 420_000);

  it('scaling the MachineDeployment to zero destroys the VMs', async () => {
    const before = (await machines()).map((m) => m.spec.providerID as string);
    expect(before).toHaveLength(3);
    await env.kubectl(['patch', 'machinedeployment', 'workers', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { replicas: 0 } })]);
    await waitFor('the ProxmoxMachines to go', async () => ((await machines()).length === 0 ? true : undefined), 180_000);
    for (const providerID of before) expect(vmOf(providerID)).toBeUndefined();
    expect(sim.violations).toEqual([]);
  }, 240_000);

  describe('a Cluster of a ClusterClass over ProxmoxClusterTemplate and ProxmoxMachineTemplate', () => {
    let journey: ClusterClassJourney;

    beforeAll(async () => {
      await installPlayedProviders(env);
      journey = clusterClassJourney({
        env,
        ns: NS,
        backend: proxmoxApi,
        clusterTemplateSpec: { providerRefs: [{ name: 'pve' }] },
        workerSpec: (memoryMiB) => ({ templateVmid: 9001, storage: 'ceph', cores: 1, memoryMiB, osDiskSizeGiB: 20, nics: [{ name: 'eth0', bridge: 'vmbr0' }] }),
        vmOf: async (providerID) => {
          const vm = vmOf(providerID);
          return vm && { memoryMiB: Number(String(vm.config.memory ?? '512').replace(/^current=/, '')) };
        },
        endpoint: { host: '192.0.2.61', port: 6443 },
      });
    }, 120_000);

    it('provisions the Cluster: CAPI creates the ProxmoxCluster and the MachineDeployment, banlieue the VMs', async () => {
      await journey.provision();
    }, 400_000);

    it('rolls the MachineDeployment to new VMs when the class names a new machine template', async () => {
      await journey.rollToNewTemplate();
      expect(sim.violations).toEqual([]);
    }, 400_000);
  });
});
