// `clusterctl move` of a banlieue-backed Cluster between two management
// clusters, each a real kube-apiserver with the real CAPI manager, banlieue's
// controller and `banlieue provider vsphere`, both on one vcsim. The target is
// also the workload cluster (the bootstrap-and-pivot runbook): its Nodes carry
// the machines' providerIDs, which is what gives the Machines the nodeRef
// clusterctl requires before it moves anything. Local environment only: the
// kind environment has one cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import type { RoleProcess } from '../support/controller-process.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';
import { localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { capiCluster, capiMachine, workersDeployment } from './capi-objects.js';
import { recordClusterctlInit } from './clusterctl-inventory.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-move';
const CLUSTER = 'pivot';
const CONTROL_PLANE_MACHINE = 'pivot-cp-0';
/** Makes `clusterctl move` wait, after pausing the Cluster and before creating anything on the target, until it is removed. */
const BLOCK_MOVE = 'clusterctl.cluster.x-k8s.io/block-move';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The object, or undefined when the API server says NotFound; any other failure throws. */
async function get(env: CapiEnvironment, kind: string, name: string): Promise<Json | undefined> {
  return env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
    (o) => JSON.parse(o) as Json,
    (err: Error) => {
      if (/\(NotFound\)/.test(err.message)) return undefined;
      throw err;
    },
  );
}

async function list(env: CapiEnvironment, kind: string): Promise<Json[]> {
  return (JSON.parse(await env.kubectl(['get', kind, '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
}

function apply(env: CapiEnvironment, obj: Json): Promise<string> {
  return env.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
}

const condition = (o: Json | undefined, type: string): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === type);

/** Every VM (not template) in vcsim as `<BIOS UUID> <power state>`, sorted: what a move must leave as it is. */
async function vmInventory(client: VsphereClient): Promise<string[]> {
  const vms: string[] = [];
  for (const dc of await client.inventory.datacenters()) {
    for (const vm of await client.vms.list(dc.vmFolder)) if (!vm.template) vms.push(`${vm.uuid ?? '?'} ${vm.powerState}`);
  }
  return vms.sort();
}

describe('clusterctl move of a banlieue-backed Cluster between two management clusters (vcsim as vCenter)', () => {
  let source: CapiEnvironment;
  let target: CapiEnvironment;
  let vcsim: Vcsim;
  let client: VsphereClient;
  /** providerID by InfraMachine name, as provisioned in the source. */
  let provisioned: Map<string, string>;
  /** The provider role of each side, for what it logged when a case fails. */
  const providers = new Map<string, RoleProcess>();
  /** vmInventory right before the move. */
  let vmsBeforeMove: string[];

  beforeAll(async () => {
    vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
    // One after the other: two control planes and two CAPI managers starting at once are slow on a small machine.
    source = await localEnvironment();
    target = await localEnvironment();
    const world = vsphereWorld(NS, vcsim, 'move', 'ubuntu-2404');
    // The runbook: CAPI and banlieue installed on both, and the Providers and their
    // Secrets created on the target before the move (they belong to no Cluster, so
    // clusterctl does not move them).
    for (const env of [source, target]) {
      await recordClusterctlInit(env);
      await env.kubectl(['create', 'namespace', NS]);
      await apply(env, world.secret);
      await apply(env, world.provider);
      // The template its machines clone, published to them as an image by a VMImage.
      await apply(env, world.vmImage);
      // --resync-period: a converged machine reads its Cluster's spec.paused again this often (Clusters are not watched).
      providers.set(
        env === source ? 'source' : 'target',
        await env.startProvider('vsphere', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5', '--resync-period', '5']),
      );
      await waitFor(
        'the Provider to discover vcsim',
        async () => ((await get(env, 'provider', 'vcsim'))?.status?.failureDomains?.length === 2 ? true : undefined),
        90_000,
      );
    }
  }, 900_000);

  afterAll(async () => {
    await source?.stop();
    await target?.stop();
    await client?.close();
    await vcsim?.stop();
  });

  it('provisions a Cluster in the source: a control-plane Machine and a MachineDeployment of two, each a vcsim VM with a Node', async () => {
    await apply(source, {
      apiVersion: INFRA,
      kind: 'VSphereCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: { controlPlaneEndpoint: { host: '192.0.2.60', port: 6443 }, providerRefs: [{ name: 'vcsim' }] },
    });
    await apply(source, capiCluster(NS, CLUSTER, 'VSphereCluster'));
    const cluster = await waitFor('the Cluster', () => get(source, 'cluster.cluster.x-k8s.io', CLUSTER), 30_000);
    // What a bootstrap provider would write. Owned by the Cluster so that clusterctl moves them (CABPK's are owned by their KubeadmConfig).
    const ownedByCluster = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: CLUSTER, uid: cluster.metadata.uid as string }];
    for (const name of [`${CONTROL_PLANE_MACHINE}-bootstrap`, 'workers-bootstrap']) {
      await apply(source, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace: NS, ownerReferences: ownedByCluster },
        stringData: { value: '#cloud-config\n', format: 'cloud-config' },
      });
    }
    // The workload cluster's kubeconfig, as CAPI names it: here the target's API server (the pivot).
    await apply(source, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${CLUSTER}-kubeconfig`, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
      stringData: { value: readFileSync(target.kubeconfig, 'utf8') },
    });

    const failureDomain = (await get(source, 'provider', 'vcsim'))?.status?.failureDomains?.[0]?.name as string;
    await apply(source, {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name: CONTROL_PLANE_MACHINE, namespace: NS },
      spec: { template: 'ubuntu-2404', numCpus: 2, memoryMiB: 2048, network: [{ name: 'eth0', portGroup: 'VM Network' }] },
    });
    await apply(
      source,
      capiMachine(NS, CONTROL_PLANE_MACHINE, {
        cluster: CLUSTER,
        infraKind: 'VSphereMachine',
        failureDomain,
        labels: { 'cluster.x-k8s.io/control-plane': '' },
      }),
    );
    await apply(source, {
      apiVersion: INFRA,
      kind: 'VSphereMachineTemplate',
      metadata: { name: 'workers', namespace: NS },
      spec: { template: { spec: { template: 'ubuntu-2404', numCpus: 2, memoryMiB: 2048, network: [{ name: 'eth0', portGroup: 'VM Network' }] } } },
    });
    await apply(source, workersDeployment(NS, CLUSTER, 2, 'VSphereMachineTemplate'));

    const machines = await waitFor(
      'three VSphereMachines provisioned in vcsim',
      async () => {
        const created = (await list(source, 'vspheremachines')).filter(
          (m) => m.status?.initialization?.provisioned === true && typeof m.spec.providerID === 'string',
        );
        return created.length === 3 ? created : undefined;
      },
      180_000,
    );
    provisioned = new Map(machines.map((m) => [m.metadata.name as string, m.spec.providerID as string]));
    // Play VMware Tools: each guest reports an address, and the machines become Ready.
    for (const [i, providerID] of [...provisioned.values()].entries()) expect(await playTools(client, uuidOf(providerID), `10.60.0.${i + 10}`)).toBe(true);
    await waitFor(
      'the VSphereMachines to be Ready in the source',
      async () => {
        const all = await list(source, 'vspheremachines');
        return all.length === 3 && all.every((m) => condition(m, 'Ready')?.status === 'True') ? true : undefined;
      },
      120_000,
    );

    // The kubelets of the workload cluster register their Nodes with the providerIDs the machines gave them.
    const capiMachines = await list(source, 'machines.cluster.x-k8s.io');
    expect(capiMachines).toHaveLength(3);
    for (const m of capiMachines) {
      const providerID = await waitFor(
        `Machine ${m.metadata.name as string} to take its providerID`,
        async () => (await get(source, 'machine.cluster.x-k8s.io', m.metadata.name as string))?.spec?.providerID as string | undefined,
        120_000,
      );
      await target.kubectl(
        ['apply', '--server-side', '--field-manager=kubelet', '-f', '-'],
        JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: m.metadata.name as string }, spec: { providerID } }),
      );
    }
    // clusterctl moves nothing before every Machine has its Node and the control plane is initialized.
    await waitFor(
      'every Machine to have a nodeRef and the control plane to be initialized',
      async () => {
        const all = await list(source, 'machines.cluster.x-k8s.io');
        const c = await get(source, 'cluster.cluster.x-k8s.io', CLUSTER);
        return (
          all.length === 3 &&
          all.every((m) => m.status?.nodeRef?.name) &&
          condition(c, 'ControlPlaneInitialized')?.status === 'True' &&
          c?.status?.initialization?.infrastructureProvisioned === true
        );
      },
      180_000,
    );
  }, 600_000);

  it('moves every object to the target and removes it from the source; the source, paused, touches no VM: same UUIDs and power states, none added, none deleted', async () => {
    vmsBeforeMove = await vmInventory(client);
    expect(vmsBeforeMove).toEqual(expect.arrayContaining([...provisioned.values()].map((p) => `${uuidOf(p)} poweredOn`)));

    // Hold the move once clusterctl has paused the Cluster, with the annotation a provider may use to make move wait:
    // meanwhile the source's banlieue, still running, reports every machine paused and leaves it alone.
    await source.kubectl(['annotate', 'vspheremachine', CONTROL_PLANE_MACHINE, '-n', NS, `${BLOCK_MOVE}=e2e`]);
    const move = source.clusterctl(['move', '--kubeconfig', source.kubeconfig, '--to-kubeconfig', target.kubeconfig, '--namespace', NS, '-v', '1']);
    const finished = move.then(
      () => true,
      (err: unknown) => err,
    );
    const paused = await waitFor(
      'Paused=True on every source VSphereMachine while clusterctl waits',
      async () => {
        const all = await list(source, 'vspheremachines');
        return all.length === 3 && all.every((m) => condition(m, 'Paused')?.status === 'True') ? all : undefined;
      },
      120_000,
    );
    for (const m of paused) expect(condition(m, 'Paused')?.message).toContain(`Cluster ${CLUSTER} has spec.paused`);
    expect(await list(target, 'vspheremachines'), 'created on the target while clusterctl should be waiting').toEqual([]);
    await source.kubectl(['annotate', 'vspheremachine', CONTROL_PLANE_MACHINE, '-n', NS, `${BLOCK_MOVE}-`]);
    expect(await finished).toBe(true);

    // Gone from the source: clusterctl paused the Cluster, deleted every object and removed their finalizers,
    // while the source's provider role kept running; it touched no VM, since the Cluster was paused.
    for (const kind of [
      'cluster.cluster.x-k8s.io',
      'machines.cluster.x-k8s.io',
      'machinedeployments.cluster.x-k8s.io',
      'vspheremachines',
      'vsphereclusters',
      'vspheremachinetemplates',
    ]) {
      expect(await list(source, kind), `${kind} left in the source`).toEqual([]);
    }
    const sourceEvents = (await list(source, 'events')).filter((e) => e.involvedObject.kind === 'VSphereMachine');
    expect(sourceEvents.filter((e) => e.reason === 'Deleted' || e.reason === 'VMNotOwned')).toEqual([]);

    // On the target, with the identity it had: the same providerIDs, under new UIDs.
    const moved = await list(target, 'vspheremachines');
    expect(new Map(moved.map((m) => [m.metadata.name as string, m.spec.providerID as string]))).toEqual(provisioned);
    expect(await vmInventory(client)).toEqual(vmsBeforeMove);
  }, 300_000);

  it('is reconciled by the target once clusterctl unpauses it: the provider role adopts each VM, none is created', async () => {
    const cluster = await waitFor(
      'the moved Cluster to be unpaused',
      async () => {
        const c = await get(target, 'cluster.cluster.x-k8s.io', CLUSTER);
        return c && c.spec.paused !== true ? c : undefined;
      },
      60_000,
    );
    expect(cluster.spec.infrastructureRef).toMatchObject({ kind: 'VSphereCluster', name: CLUSTER });
    const machines = await waitFor(
      'the moved VSphereMachines to be Ready on the target',
      async () => {
        const all = await list(target, 'vspheremachines');
        return all.length === 3 &&
          all.every(
            (m) => condition(m, 'Ready')?.status === 'True' && m.status?.initialization?.provisioned === true && condition(m, 'Paused')?.status === 'False',
          )
          ? all
          : undefined;
      },
      180_000,
    ).catch(async (err: unknown) => {
      const state = (await list(target, 'vspheremachines')).map((m) => ({ name: m.metadata.name, conditions: m.status?.conditions }));
      throw new Error(`${String(err)}\n${JSON.stringify(state, null, 1)}\n${providers.get('target')?.logs().slice(-4000) ?? ''}`);
    });
    for (const m of machines) {
      expect(m.spec.providerID).toBe(provisioned.get(m.metadata.name as string));
      // Placed again, where it was: the record does not survive a move, the spec does.
      expect(m.status.placement?.provider).toBe('vcsim');
    }
    const events = (await list(target, 'events')).filter((e) => e.involvedObject.kind === 'VSphereMachine');
    expect(new Set(events.filter((e) => e.reason === 'Adopted').map((e) => e.involvedObject.name as string))).toEqual(new Set(provisioned.keys()));
    expect(events.filter((e) => e.reason === 'Created' || e.reason === 'CreateStarted')).toEqual([]);

    // The target's CAPI finds the same Nodes again, by providerID.
    await waitFor(
      'the moved Machines to be provisioned with their Nodes on the target',
      async () => {
        const all = await list(target, 'machines.cluster.x-k8s.io');
        return all.length === 3 && all.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.status?.nodeRef?.name === m.metadata.name)
          ? true
          : undefined;
      },
      180_000,
    );
    // The same VMs, in the same power state: one per machine, none added.
    expect(await vmInventory(client)).toEqual(vmsBeforeMove);
  }, 600_000);

  it('leaves the source Provider free to go: nothing moved holds its provider-in-use finalizer, and deleting it touches no VM', async () => {
    await source.kubectl(['delete', 'provider', 'vcsim', '-n', NS, '--wait=false']);
    await waitFor('the source Provider to be deleted', async () => ((await get(source, 'provider', 'vcsim')) === undefined ? true : undefined), 120_000);
    expect(await vmInventory(client)).toEqual(vmsBeforeMove);
    expect((await get(target, 'provider', 'vcsim'))?.metadata.deletionTimestamp).toBeUndefined();
  }, 300_000);
});
