// MachineHealthCheck remediation of banlieue-backed Machines, against the real
// CAPI manager and `banlieue provider vsphere` on vcsim: CAPI decides, and the
// Machine it remediates is deleted by its MachineSet, which deletes its
// VSphereMachine, which destroys its VM (docs/adr/0022-when-banlieue-destroys-a-vm.md,
// row 9). banlieue cannot tell a remediation from any other deletion; the guard
// is the MachineHealthCheck's own `remediation.triggerIf`. The management
// cluster is also the workload cluster: its Nodes carry the machines'
// providerIDs, and the test plays the node problem detector (a condition on a
// Node).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';
import { localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, capiMachine, workersDeployment } from './capi-objects.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-remediation';
const CLUSTER = 'healing';
const CONTROL_PLANE_MACHINE = 'healing-cp-0';
/** The Node condition the MachineHealthCheck watches (as CAPI's own remediation e2e uses one). */
const PROBLEM = 'e2e.remediation.condition';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('MachineHealthCheck remediation of Machines on vSphere (vcsim)', () => {
  let env: CapiEnvironment;
  let vcsim: Vcsim;
  let client: VsphereClient;
  /** The providerID of each Machine, by Machine name, once provisioned. */
  let providerIDs: Map<string, string>;

  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      (err: Error) => {
        if (/\(NotFound\)/.test(err.message)) return undefined;
        throw err;
      },
    );
  const list = async (kind: string): Promise<Json[]> => (JSON.parse(await env.kubectl(['get', kind, '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
  const apply = (obj: Json): Promise<string> => env.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  const condition = (o: Json | undefined, type: string): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === type);
  /** The VMs of the given providerIDs that vcsim still has. */
  const present = async (ids: Iterable<string>): Promise<string[]> => {
    const found: string[] = [];
    for (const id of ids) if (await client.search.findVmByBiosUuid(uuidOf(id))) found.push(id);
    return found.sort();
  };
  /** What a node problem detector reports on the Node of Machine `name`. */
  const reportOnNode = (name: string, status: 'True' | 'False'): Promise<string> => {
    const now = new Date().toISOString();
    const problem = { type: PROBLEM, status, reason: 'E2E', message: 'set by the test', lastTransitionTime: now, lastHeartbeatTime: now };
    return env.kubectl(['patch', 'node', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions: [problem] } })]);
  };
  const workers = async (): Promise<Json[]> =>
    (await list('machines.cluster.x-k8s.io')).filter((m) => m.metadata.labels?.['cluster.x-k8s.io/deployment-name'] === 'workers');

  beforeAll(async () => {
    vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
    env = await localEnvironment();
    const world = vsphereWorld(NS, vcsim, 'healing', 'ubuntu-2404');
    await env.kubectl(['create', 'namespace', NS]);
    await apply(world.secret);
    await apply(world.provider);
    // The template its machines clone, published to them as an image by a VMImage.
    await apply(world.vmImage);
    await env.startProvider('vsphere', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5', '--resync-period', '5']);
    await waitFor(
      'the Provider to discover vcsim',
      async () => ((await get('provider', 'vcsim'))?.status?.failureDomains?.length === 2 ? true : undefined),
      90_000,
    );

    await apply({
      apiVersion: INFRA,
      kind: 'VSphereCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.0.2.70', port: 6443 }, providerRefs: [{ name: 'vcsim' }] },
    });
    await apply(capiCluster(NS, CLUSTER, 'VSphereCluster'));
    for (const name of [`${CONTROL_PLANE_MACHINE}-bootstrap`, 'workers-bootstrap']) {
      await apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS }, stringData: { value: '#cloud-config\n', format: 'cloud-config' } });
    }
    // The workload cluster's kubeconfig, as CAPI names it: this same API server.
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${CLUSTER}-kubeconfig`, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
      stringData: { value: readFileSync(env.kubeconfig, 'utf8') },
    });
    const failureDomain = (await get('provider', 'vcsim'))?.status?.failureDomains?.[0]?.name as string;
    const machineSpec = { template: 'ubuntu-2404', numCpus: 1, memoryMiB: 512, network: [{ name: 'eth0', portGroup: 'VM Network' }] };
    await apply({ apiVersion: INFRA, kind: 'VSphereMachine', metadata: { name: CONTROL_PLANE_MACHINE, namespace: NS }, spec: machineSpec });
    await apply(
      capiMachine(NS, CONTROL_PLANE_MACHINE, {
        cluster: CLUSTER,
        infraKind: 'VSphereMachine',
        failureDomain,
        labels: { 'cluster.x-k8s.io/control-plane': '' },
      }),
    );
    await apply({ apiVersion: INFRA, kind: 'VSphereMachineTemplate', metadata: { name: 'workers', namespace: NS }, spec: { template: { spec: machineSpec } } });
    await apply(workersDeployment(NS, CLUSTER, 3, 'VSphereMachineTemplate'));

    const machines = await waitFor(
      'four VSphereMachines provisioned in vcsim',
      async () => {
        const created = (await list('vspheremachines')).filter((m) => m.status?.initialization?.provisioned === true && typeof m.spec.providerID === 'string');
        return created.length === 4 ? created : undefined;
      },
      240_000,
    );
    for (const [i, m] of machines.entries()) expect(await playTools(client, uuidOf(m.spec.providerID as string), `10.70.0.${i + 10}`)).toBe(true);
    // The kubelets register their Nodes with the providerIDs the machines gave them.
    providerIDs = new Map();
    for (const m of await list('machines.cluster.x-k8s.io')) {
      const name = m.metadata.name as string;
      const providerID = await waitFor(
        `Machine ${name} to take its providerID`,
        async () => (await get('machine.cluster.x-k8s.io', name))?.spec?.providerID as string | undefined,
        120_000,
      );
      providerIDs.set(name, providerID);
      await env.kubectl(
        ['apply', '--server-side', '--field-manager=kubelet', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { providerID } }),
      );
    }
    await waitFor(
      'every Machine to have its Node and the control plane to be initialized',
      async () => {
        const all = await list('machines.cluster.x-k8s.io');
        const c = await get('cluster.cluster.x-k8s.io', CLUSTER);
        return all.length === 4 && all.every((m) => m.status?.nodeRef?.name) && condition(c, 'ControlPlaneInitialized')?.status === 'True';
      },
      240_000,
    );
    // Remediates a worker whose Node reports the problem for 5 s, while at most one worker does.
    await apply({
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachineHealthCheck',
      metadata: { name: 'workers', namespace: NS },
      spec: {
        clusterName: CLUSTER,
        selector: { matchLabels: { 'cluster.x-k8s.io/deployment-name': 'workers' } },
        checks: { unhealthyNodeConditions: [{ type: PROBLEM, status: 'False', timeoutSeconds: 5 }] },
        remediation: { triggerIf: { unhealthyLessThanOrEqualTo: 1 } },
      },
    });
    await waitFor(
      'the MachineHealthCheck to see three healthy workers',
      async () => {
        const mhc = await get('machinehealthcheck.cluster.x-k8s.io', 'workers');
        return mhc?.status?.expectedMachines === 3 && mhc.status.currentHealthy === 3 ? true : undefined;
      },
      120_000,
    );
  }, 900_000);

  afterAll(async () => {
    await env?.stop();
    await client?.close();
    await vcsim?.stop();
  });

  it('remediates nothing, and destroys no VM, while more Machines are unhealthy than triggerIf allows', async () => {
    const before = await present(providerIDs.values());
    expect(before).toHaveLength(4);
    const [first, second] = (await workers()).map((m) => m.metadata.name as string).sort();
    if (!first || !second) throw new Error('fewer than two workers');
    await reportOnNode(first, 'False');
    await reportOnNode(second, 'False');
    const held = await waitFor(
      'the MachineHealthCheck to hold remediation back',
      async () => {
        const mhc = await get('machinehealthcheck.cluster.x-k8s.io', 'workers');
        return mhc?.status?.currentHealthy === 1 && condition(mhc, 'RemediationAllowed')?.status === 'False' ? mhc : undefined;
      },
      120_000,
    );
    expect(condition(held, 'RemediationAllowed')?.reason).toBe('TooManyUnhealthy');
    for (const m of await workers()) expect(m.metadata.deletionTimestamp).toBeUndefined();
    expect(await present(providerIDs.values())).toEqual(before);
    // One of them recovers: one unhealthy Machine is within what the check allows.
    await reportOnNode(second, 'True');
  });

  it('destroys the VM of the one Machine it remediates, and no other', async () => {
    const [unhealthy] = (await workers()).map((m) => m.metadata.name as string).sort();
    if (!unhealthy) throw new Error('no worker');
    const doomed = providerIDs.get(unhealthy) as string;
    await waitFor(
      `Machine ${unhealthy} and its VSphereMachine to be deleted`,
      async () => ((await get('machine.cluster.x-k8s.io', unhealthy)) === undefined ? true : undefined),
      180_000,
    );
    await waitFor('its VM to be destroyed', async () => ((await client.search.findVmByBiosUuid(uuidOf(doomed))) ? undefined : true), 120_000);
    const others = [...providerIDs.entries()].filter(([name]) => name !== unhealthy).map(([, id]) => id);
    expect(await present(others)).toEqual([...others].sort());
    // Its MachineSet replaces it: a new Machine, a new VM.
    await waitFor('three workers again', async () => ((await workers()).filter((m) => !m.metadata.deletionTimestamp).length === 3 ? true : undefined), 180_000);
  });
});
