// ClusterClass end to end, against the real CAPI manager with ClusterTopology
// on: a Cluster of a class over VSphereClusterTemplate and VSphereMachineTemplate
// provisions VMs in vcsim through `banlieue provider vsphere`; pointing the class
// at a new machine template rolls the MachineDeployment to new VMs, which needs
// CAPI's dry-run apply on the existing template to pass banlieue's template
// immutability policy. The control-plane and bootstrap providers are played by
// the test (played-providers.ts): their real ones need a workload cluster.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { makeTemplate, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere-world.js';
import { waitFor } from '../support/wait.js';
import { topologyClass, topologyCluster, type TopologyClassProps } from './capi-clusterclass-objects.js';
import { kindEnvironment, localEnvironment, type CapiEnvironment } from './capi-environment.js';
import { BOOTSTRAP_API, CONTROL_PLANE_API, playBootstrapConfigs, playControlPlanes, playedProviderComponents } from './played-providers.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';
const NS = 'capi-clusterclass';
const CLASS = 'banlieue-vsphere-e2e';
const CLUSTER = 'topo';
const WORKERS = 2;
const USER_DATA = '#cloud-config\nruncmd: [kubeadm join]\n';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const condition = (o: Json | undefined, type: string): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === type);

/** A VSphereMachineTemplate for the workers of the class, `memoryMiB` each. */
function workerTemplate(name: string, memoryMiB: number): Json {
  return { apiVersion: INFRA, kind: 'VSphereMachineTemplate', metadata: { name, namespace: NS }, spec: { template: { spec: { template: 'ubuntu-2404', numCpus: 1, memoryMiB, network: [{ name: 'eth0', portGroup: 'VM Network' }] } } } };
}

describe('ClusterClass over banlieue templates (real CAPI manager with ClusterTopology, vcsim as vCenter)', () => {
  let env: CapiEnvironment;
  let vcsim: Vcsim;
  let client: VsphereClient;
  /** BIOS UUIDs of the VMs the class's first machine template made. */
  let firstVms: string[] = [];
  // No kubelet registers a Node here, so no Machine ever becomes Available, and a
  // rolling update only removes old Machines within maxUnavailable of the Available
  // ones: it must allow every Machine to be unavailable, or it would wait forever.
  const classProps: TopologyClassProps = { clusterTemplate: 'vsphere', controlPlaneTemplate: 'control-plane', bootstrapTemplate: 'worker', workerTemplate: 'worker-1g', maxUnavailable: WORKERS };

  const list = async (kind: string): Promise<Json[]> => (JSON.parse(await env.kubectl(['get', kind, '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', NS, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      (err: Error) => {
        if (/\(NotFound\)/.test(err.message)) return undefined;
        throw err;
      },
    );
  const apply = (obj: Json): Promise<string> => env.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  /** One pass of the played control-plane and bootstrap providers; each probe below starts with it. */
  const play = async (): Promise<void> => {
    await playControlPlanes((args, input) => env.kubectl(args, input), NS);
    await playBootstrapConfigs((args, input) => env.kubectl(args, input), NS, USER_DATA);
  };
  /** The VSphereMachines with a providerID whose VM vcsim has, once there are exactly `count`, each with the VM's memory. */
  const provisionedMachines = async (count: number): Promise<{ machine: Json; uuid: string; memoryMB: number }[] | undefined> => {
    const machines = (await list('vspheremachines')).filter((m) => typeof m.spec.providerID === 'string' && m.metadata.deletionTimestamp === undefined);
    if (machines.length !== count) return undefined;
    const found = [];
    for (const machine of machines) {
      const uuid = uuidOf(machine.spec.providerID as string);
      const vm = await client.search.findVmByBiosUuid(uuid);
      if (!vm) return undefined;
      const content = await client.properties.retrieveOne(vm, ['config.hardware.memoryMB']);
      found.push({ machine, uuid, memoryMB: Number(content.props.get('config.hardware.memoryMB')?.text) });
    }
    return found;
  };
  /** Where CAPI stopped, for a failed wait: topology objects and what the manager said about them. */
  const explain = async (err: unknown): Promise<never> => {
    const state = await env.kubectl(['get', 'clusters.cluster.x-k8s.io,machinedeployments,machinesets,machines,testcontrolplanes,testbootstrapconfigs', '-n', NS, '-o', 'yaml']).catch((e: Error) => e.message);
    const capiSaid = env.capiLogs().split('\n').filter((l) => /topology|clusterclass|dry.?run/i.test(l) && /error|fail|refused|immutable/i.test(l)).slice(-8).join('\n');
    throw new Error(`${String(err)}\nCAPI manager:\n${capiSaid}\n${state.slice(0, 8000)}`);
  };

  beforeAll(async () => {
    env = process.env.E2E_CAPI_ENV === 'kind' ? await kindEnvironment() : await localEnvironment();
    await env.kubectl(['apply', '--server-side', '-f', '-'], playedProviderComponents());
    await env.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/testcontrolplanes.controlplane.test.banlieue.io', 'crd/testcontrolplanetemplates.controlplane.test.banlieue.io', 'crd/testbootstrapconfigs.bootstrap.test.banlieue.io', 'crd/testbootstrapconfigtemplates.bootstrap.test.banlieue.io']);
    vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
    await env.kubectl(['create', 'namespace', NS]);
    const world = vsphereWorld(NS, vcsim, 'clusterclass', 'ubuntu-2404');
    await apply(world.secret);
    await apply(world.provider);
    await env.startProvider('vsphere', ['--namespace', NS, '--poll-period', '1', '--rediscover-period', '5']);
    await waitFor('the Provider to discover vcsim', async () => ((await get('provider', 'vcsim'))?.status?.failureDomains?.length === 2 ? true : undefined), 90_000);
  }, 600_000);

  afterAll(async () => {
    await env?.stop();
    await client?.close();
    await vcsim?.stop();
  });

  it('provisions a Cluster of the class: CAPI creates the VSphereCluster and the MachineDeployment, banlieue the VMs', async () => {
    await apply({ apiVersion: INFRA, kind: 'VSphereClusterTemplate', metadata: { name: classProps.clusterTemplate, namespace: NS }, spec: { template: { spec: { providerRefs: [{ name: 'vcsim' }] } } } });
    await apply({ apiVersion: CONTROL_PLANE_API, kind: 'TestControlPlaneTemplate', metadata: { name: classProps.controlPlaneTemplate, namespace: NS }, spec: { template: { spec: {} } } });
    await apply({ apiVersion: BOOTSTRAP_API, kind: 'TestBootstrapConfigTemplate', metadata: { name: classProps.bootstrapTemplate, namespace: NS }, spec: { template: { spec: {} } } });
    await apply(workerTemplate(classProps.workerTemplate, 1024));
    await apply(topologyClass(NS, CLASS, classProps));
    // A Cluster may only name a class CAPI has reconciled (its webhook refuses one that is not up to date).
    await waitFor('the ClusterClass to be reconciled with its variables', async () => {
      const c = await get('clusterclass', CLASS);
      return c?.status?.observedGeneration === c?.metadata.generation && condition(c, 'VariablesReady')?.status === 'True' ? c : undefined;
    }, 60_000).catch(explain);
    await apply(topologyCluster(NS, CLUSTER, { className: CLASS, version: 'v1.35.4', workers: WORKERS, endpoint: { host: '192.0.2.70', port: 6443 } }));

    // The InfraCluster is CAPI's copy of the class template, with the endpoint the variable patched in.
    const cluster = await waitFor('the Cluster to reference the VSphereCluster the topology made, provisioned', async () => {
      await play();
      const c = await get('cluster.cluster.x-k8s.io', CLUSTER);
      return c?.spec?.infrastructureRef?.name && c.status?.initialization?.infrastructureProvisioned === true ? c : undefined;
    }, 120_000).catch(explain);
    expect(cluster.spec.infrastructureRef).toMatchObject({ apiGroup: 'infrastructure.banlieue.io', kind: 'VSphereCluster' });
    expect(cluster.spec.controlPlaneEndpoint).toEqual({ host: '192.0.2.70', port: 6443 });
    const infraCluster = await get('vspherecluster', cluster.spec.infrastructureRef.name as string);
    expect(infraCluster?.spec).toMatchObject({ controlPlaneEndpoint: { host: '192.0.2.70', port: 6443 }, providerRefs: [{ name: 'vcsim' }] });
    expect(infraCluster?.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe(classProps.clusterTemplate);

    const vms = await waitFor(`${WORKERS} VSphereMachines of the MachineDeployment with a VM in vcsim`, async () => {
      await play();
      return provisionedMachines(WORKERS);
    }, 180_000).catch(explain);
    vms.forEach((vm) => expect(vm.memoryMB).toBe(1024));
    firstVms = vms.map((vm) => vm.uuid);

    const machines = await waitFor('the Machines to take their providerIDs', async () => {
      const all = await list('machines.cluster.x-k8s.io');
      return all.length === WORKERS && all.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID) ? all : undefined;
    }, 120_000).catch(explain);
    expect(machines.map((m) => uuidOf(m.spec.providerID as string)).sort()).toEqual([...firstVms].sort());
    const [deployment] = await list('machinedeployments');
    expect(deployment?.metadata.labels['topology.cluster.x-k8s.io/deployment-name']).toBe('md-0');
  }, 400_000);

  it('rolls the MachineDeployment to new VMs when the class names a new machine template: CAPI\'s dry run on the old template is admitted', async () => {
    const [before] = await list('machinedeployments');
    const oldTemplate = before?.spec.template.spec.infrastructureRef.name as string;
    await apply(workerTemplate('worker-2g', 2048));
    await apply(topologyClass(NS, CLASS, { ...classProps, workerTemplate: 'worker-2g' }));

    const vms = await waitFor(`${WORKERS} new VMs with 2048 MB, the old ones gone`, async () => {
      await play();
      const found = await provisionedMachines(WORKERS);
      if (!found?.every((vm) => vm.memoryMB === 2048 && !firstVms.includes(vm.uuid))) return undefined;
      for (const uuid of firstVms) if (await client.search.findVmByBiosUuid(uuid)) return undefined;
      return found;
    }, 300_000).catch(explain);
    vms.forEach((vm) => expect(vm.machine.spec.memoryMiB).toBe(2048));

    // CAPI made a new template for the Cluster (its own copy of worker-2g) and pointed the MachineDeployment at it.
    const [after] = await list('machinedeployments');
    const newTemplate = after?.spec.template.spec.infrastructureRef.name as string;
    expect(newTemplate).not.toBe(oldTemplate);
    const copy = await get('vspheremachinetemplate', newTemplate);
    expect(copy?.spec.template.spec.memoryMiB).toBe(2048);
    expect(copy?.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe('worker-2g');
    const topo = await waitFor('TopologyReconciled=True on the Cluster', async () => {
      const c = await get('cluster.cluster.x-k8s.io', CLUSTER);
      return condition(c, 'TopologyReconciled')?.status === 'True' ? c : undefined;
    }, 120_000).catch(explain);
    expect(condition(topo, 'TopologyReconciled')?.reason).toBe('ReconcileSucceeded');
    // The policy refused no dry run: nothing in the manager's log says a template is immutable.
    expect(env.capiLogs()).not.toMatch(/is immutable: create a new template/);
  }, 400_000);
});
