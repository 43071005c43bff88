// CAPI IPAM with the real CAPI manager: a MachineDeployment whose
// ProxmoxMachineTemplate NIC takes its address from an IPAM pool. The provider
// role (as its ServiceAccount, with the RBAC clusterctl's components give it)
// claims one address per machine against CAPI's own IPAM CRDs; the test plays
// the IPAM provider (it writes each IPAddress and the claim's
// status.addressRef, as cluster-api-ipam-provider-in-cluster does). The
// addresses reach the Machines, and the claims go when the machines go.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import { proxmoxWorld } from '../support/proxmox/world.js';
import { waitFor } from '../support/wait.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, workersDeployment } from './capi-objects.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-ipam';
const CLUSTER = 'pve-ipam';
const POOL = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'nodes' };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('Machines with addresses from a CAPI IPAM pool (PVE simulator)', () => {
  let env: CapiEnvironment;
  let sim: ProxmoxSim;
  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      () => undefined,
    );
  const list = async (kind: string): Promise<Json[]> => (JSON.parse(await env.kubectl(['get', kind, '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
  const apply = (obj: Json, fieldManager = 'e2e'): Promise<string> =>
    env.kubectl(['apply', '--server-side', `--field-manager=${fieldManager}`, '-f', '-'], JSON.stringify(obj));

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
      'the Provider to discover its nodes',
      async () => ((await get('provider', 'pve'))?.status?.failureDomains?.length > 0 ? true : undefined),
      120_000,
    );
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'workers-bootstrap', namespace: NS },
      stringData: { value: '#cloud-config\n', format: 'cloud-config' },
    });
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
    await sim?.stop();
  });

  it('claims one address per machine, provisions the VMs once bound, and the Machines carry the pool addresses', async () => {
    await apply({
      apiVersion: INFRA,
      kind: 'ProxmoxCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.0.2.61', port: 6443 }, providerRefs: [{ name: 'pve' }] },
    });
    await apply(capiCluster(NS, CLUSTER, 'ProxmoxCluster'));
    await apply({
      apiVersion: INFRA,
      kind: 'ProxmoxMachineTemplate',
      metadata: { name: 'workers', namespace: NS },
      spec: {
        template: {
          spec: {
            templateVmid: 9001,
            storage: 'ceph',
            cores: 1,
            memoryMiB: 1024,
            osDiskSizeGiB: 10,
            nics: [{ name: 'eth0', bridge: 'vmbr0', ipam: { addressesFromPools: [POOL] } }],
          },
        },
      },
    });
    const vmsBefore = sim.state.vms.size;
    await apply(workersDeployment(NS, CLUSTER, 2, 'ProxmoxMachineTemplate'));

    const claims = await waitFor(
      'two IPAddressClaims, one per ProxmoxMachine',
      async () => {
        const found = await list('ipaddressclaims.ipam.cluster.x-k8s.io');
        return found.length === 2 ? found : undefined;
      },
      240_000,
    );
    const infraMachines = await list('proxmoxmachines');
    for (const claim of claims) {
      const owner = infraMachines.find((m) => claim.metadata.name === `${m.metadata.name as string}-0-0`);
      expect(owner, `claim ${claim.metadata.name as string}`).toBeDefined();
      expect(claim.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'ProxmoxMachine', name: owner?.metadata.name, uid: owner?.metadata.uid, controller: true }),
      ]);
      expect(claim.spec).toEqual({ poolRef: POOL, clusterName: CLUSTER });
    }
    // Nothing is created before the addresses are bound.
    await waitFor(
      'both ProxmoxMachines to say WaitingForIPAddress',
      async () => {
        const found = await list('proxmoxmachines');
        return found.length === 2 && found.every((m) => m.status?.conditions?.find((c: Json) => c.type === 'Ready')?.reason === 'WaitingForIPAddress')
          ? true
          : undefined;
      },
      120_000,
    );
    expect(sim.state.vms.size).toBe(vmsBefore);

    // The IPAM provider's part.
    const addresses = new Map<string, string>();
    for (const [i, claim] of claims.entries()) {
      const name = claim.metadata.name as string;
      addresses.set(name, `10.20.0.${10 + i}`);
      await apply(
        {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          kind: 'IPAddress',
          metadata: { name, namespace: NS },
          spec: { address: `10.20.0.${10 + i}`, prefix: 24, gateway: '10.20.0.1', claimRef: { name }, poolRef: POOL },
        },
        'ipam-provider',
      );
      await env.kubectl([
        'patch',
        'ipaddressclaims.ipam.cluster.x-k8s.io',
        name,
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { addressRef: { name } } }),
      ]);
    }

    const machines = await waitFor(
      'the Machines to be provisioned with the pool addresses',
      async () => {
        const found = await list('machines.cluster.x-k8s.io');
        return found.length === 2 && found.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.status.addresses?.length === 1)
          ? found
          : undefined;
      },
      240_000,
    );
    const expected = new Map([...addresses].map(([claim, address]) => [claim.replace(/-0-0$/, ''), address]));
    for (const m of machines) {
      const infraName = m.spec.infrastructureRef.name as string;
      expect(m.status.addresses).toEqual([{ type: 'InternalIP', address: expected.get(infraName) }]);
    }
  }, 600_000);

  it('deletes the claims when the MachineDeployment scales to zero', async () => {
    await env.kubectl(['patch', 'machinedeployment', 'workers', '-n', NS, '--type=merge', '-p', JSON.stringify({ spec: { replicas: 0 } })]);
    await waitFor(
      'the ProxmoxMachines and their claims to go',
      async () => ((await list('proxmoxmachines')).length === 0 && (await list('ipaddressclaims.ipam.cluster.x-k8s.io')).length === 0 ? true : undefined),
      240_000,
    );
    expect(sim.violations).toEqual([]);
  }, 300_000);
});
