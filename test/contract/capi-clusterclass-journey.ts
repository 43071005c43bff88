// The ClusterClass journey every backend's contract e2e takes, against the
// real CAPI manager with ClusterTopology on: a Cluster of a class over the
// backend's ClusterTemplate and MachineTemplate provisions VMs through
// `banlieue provider <backend>`; pointing the class at a new machine template
// rolls the MachineDeployment to new VMs, which needs CAPI's dry-run apply on
// the existing template to pass banlieue's template immutability policy. The
// control-plane and bootstrap providers are played (played-providers.ts).
// Only the backend's template specs and how its peer shows a VM differ.
import { expect } from 'vitest';
import type { BackendApi } from '../../infra/api/backends.js';
import { apiVersionOf, crdName } from '../../infra/api/kind.js';
import { waitFor } from '../support/wait.js';
import { topologyClass, topologyCluster, type TopologyClassProps } from './capi-clusterclass-objects.js';
import type { CapiEnvironment } from './capi-environment.js';
import { BOOTSTRAP_API, CONTROL_PLANE_API, playBootstrapConfigs, playControlPlanes, playedProviderComponents } from './played-providers.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CLUSTER = 'topo';
/** The Kubernetes version the topology Clusters ask for (the played control plane runs none). */
export const KUBERNETES_VERSION = 'v1.35.4';
const USER_DATA = '#cloud-config\nruncmd: [kubeadm join]\n';
/** The Cluster's objects only: a namespace may hold another Cluster's (the backend's MachineDeployment case). */
const OF_CLUSTER = `cluster.x-k8s.io/cluster-name=${CLUSTER}`;

const condition = (o: Json | undefined, type: string): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === type);

/** A VM as the backend's peer shows it. */
export interface PeerVm {
  readonly memoryMiB: number;
}

export interface ClusterClassJourneyProps {
  readonly env: CapiEnvironment;
  /** Where the backend's Provider and its provider role are. */
  readonly ns: string;
  readonly backend: BackendApi;
  /** `spec.template.spec` of the backend's ClusterTemplate (which Providers). */
  readonly clusterTemplateSpec: Json;
  /** `spec.template.spec` of a worker MachineTemplate of `memoryMiB`. */
  workerSpec(memoryMiB: number): Json;
  /** The VM `providerID` names, read from the backend's peer; undefined when the backend has none. */
  vmOf(providerID: string): Promise<PeerVm | undefined>;
  /** @default 2 */
  readonly workers?: number;
  readonly endpoint: { readonly host: string; readonly port: number };
}

/** The played providers' CRDs and RBAC, once per environment. */
export async function installPlayedProviders(env: CapiEnvironment): Promise<void> {
  await env.kubectl(['apply', '--server-side', '-f', '-'], playedProviderComponents());
  await env.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/testcontrolplanes.controlplane.test.banlieue.io',
    'crd/testcontrolplanetemplates.controlplane.test.banlieue.io',
    'crd/testbootstrapconfigs.bootstrap.test.banlieue.io',
    'crd/testbootstrapconfigtemplates.bootstrap.test.banlieue.io',
  ]);
}

/** The two steps of the journey; `rollToNewTemplate` follows `provision`. */
export interface ClusterClassJourney {
  /** Applies the class and a Cluster of it; resolves once its workers have VMs of the first template. */
  provision(): Promise<void>;
  /** Points the class at a new machine template; resolves once the workers are new VMs of it and the old ones are gone. */
  rollToNewTemplate(): Promise<void>;
}

export function clusterClassJourney(props: ClusterClassJourneyProps): ClusterClassJourney {
  const { env, ns, backend } = props;
  const workers = props.workers ?? 2;
  const infraApi = apiVersionOf(backend.machine);
  const className = `banlieue-${backend.name}-e2e`;
  // No kubelet registers a Node here, so no Machine ever becomes Available, and a
  // rolling update only removes old Machines within maxUnavailable of the Available
  // ones: it must allow every Machine to be unavailable, or it would wait forever.
  const classProps: TopologyClassProps = {
    backend,
    clusterTemplate: backend.name,
    controlPlaneTemplate: 'control-plane',
    bootstrapTemplate: 'worker',
    workerTemplate: 'worker-1g',
    maxUnavailable: workers,
  };
  /** providerIDs of the VMs the class's first machine template made. */
  let firstVms: string[] = [];

  const list = async (kind: string, selector = OF_CLUSTER): Promise<Json[]> =>
    (JSON.parse(await env.kubectl(['get', kind, '-n', ns, '-l', selector, '-o', 'json'])) as { items: Json[] }).items;
  const get = async (kind: string, name: string): Promise<Json | undefined> =>
    env.kubectl(['get', kind, name, '-n', ns, '-o', 'json']).then(
      (o) => JSON.parse(o) as Json,
      (err: Error) => {
        if (/\(NotFound\)/.test(err.message)) return undefined;
        throw err;
      },
    );
  const apply = (obj: Json): Promise<string> => env.kubectl(['apply', '--server-side', '--field-manager=e2e', '-f', '-'], JSON.stringify(obj));
  const workerTemplate = (name: string, memoryMiB: number): Json => ({
    apiVersion: infraApi,
    kind: backend.machineTemplate.kind,
    metadata: { name, namespace: ns },
    spec: { template: { spec: props.workerSpec(memoryMiB) } },
  });
  /** One pass of the played control-plane and bootstrap providers; each probe below starts with it. */
  const play = async (): Promise<void> => {
    await playControlPlanes((args, input) => env.kubectl(args, input), ns);
    await playBootstrapConfigs((args, input) => env.kubectl(args, input), ns, USER_DATA);
  };
  /** The machines with a providerID whose VM the peer has, once there are exactly `workers`. */
  const provisionedMachines = async (): Promise<{ machine: Json; providerID: string; vm: PeerVm }[] | undefined> => {
    const machines = (await list(crdName(backend.machine))).filter((m) => typeof m.spec.providerID === 'string' && m.metadata.deletionTimestamp === undefined);
    if (machines.length !== workers) return undefined;
    const found = [];
    for (const machine of machines) {
      const providerID = machine.spec.providerID as string;
      const vm = await props.vmOf(providerID);
      if (!vm) return undefined;
      found.push({ machine, providerID, vm });
    }
    return found;
  };
  /** Where CAPI stopped, for a failed wait: topology objects and what the manager said about them. */
  const explain = async (err: unknown): Promise<never> => {
    const state = await env
      .kubectl([
        'get',
        'clusters.cluster.x-k8s.io,machinedeployments,machinesets,machines,testcontrolplanes,testbootstrapconfigs',
        '-n',
        ns,
        '-l',
        OF_CLUSTER,
        '-o',
        'yaml',
      ])
      .catch((e: Error) => e.message);
    const capiSaid = env
      .capiLogs()
      .split('\n')
      .filter((l) => /topology|clusterclass|dry.?run/i.test(l) && /error|fail|refused|immutable/i.test(l))
      .slice(-8)
      .join('\n');
    throw new Error(`${String(err)}\nCAPI manager:\n${capiSaid}\n${state.slice(0, 8000)}`);
  };

  return {
    async provision() {
      await apply({
        apiVersion: infraApi,
        kind: backend.clusterTemplate.kind,
        metadata: { name: classProps.clusterTemplate, namespace: ns },
        spec: { template: { spec: props.clusterTemplateSpec } },
      });
      await apply({
        apiVersion: CONTROL_PLANE_API,
        kind: 'TestControlPlaneTemplate',
        metadata: { name: classProps.controlPlaneTemplate, namespace: ns },
        spec: { template: { spec: {} } },
      });
      await apply({
        apiVersion: BOOTSTRAP_API,
        kind: 'TestBootstrapConfigTemplate',
        metadata: { name: classProps.bootstrapTemplate, namespace: ns },
        spec: { template: { spec: {} } },
      });
      await apply(workerTemplate(classProps.workerTemplate, 1024));
      await apply(topologyClass(ns, className, classProps));
      // A Cluster may only name a class CAPI has reconciled (its webhook refuses one that is not up to date).
      await waitFor(
        'the ClusterClass to be reconciled with its variables',
        async () => {
          const c = await get('clusterclass', className);
          return c?.status?.observedGeneration === c?.metadata.generation && condition(c, 'VariablesReady')?.status === 'True' ? c : undefined;
        },
        60_000,
      ).catch(explain);
      await apply(topologyCluster(ns, CLUSTER, { className, version: KUBERNETES_VERSION, workers, endpoint: props.endpoint }));

      // The InfraCluster is CAPI's copy of the class template, with the endpoint the variable patched in.
      const cluster = await waitFor(
        `the Cluster to reference the ${backend.cluster.kind} the topology made, provisioned`,
        async () => {
          await play();
          const c = await get('cluster.cluster.x-k8s.io', CLUSTER);
          return c?.spec?.infrastructureRef?.name && c.status?.initialization?.infrastructureProvisioned === true ? c : undefined;
        },
        120_000,
      ).catch(explain);
      expect(cluster.spec.infrastructureRef).toMatchObject({ apiGroup: backend.cluster.group, kind: backend.cluster.kind });
      expect(cluster.spec.controlPlaneEndpoint).toEqual(props.endpoint);
      const infraCluster = await get(crdName(backend.cluster), cluster.spec.infrastructureRef.name as string);
      expect(infraCluster?.spec).toMatchObject({ ...props.clusterTemplateSpec, controlPlaneEndpoint: props.endpoint });
      expect(infraCluster?.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe(classProps.clusterTemplate);

      const vms = await waitFor(
        `${workers} ${backend.machine.kind}s of the MachineDeployment with a VM in the backend`,
        async () => {
          await play();
          return provisionedMachines();
        },
        180_000,
      ).catch(explain);
      vms.forEach(({ vm }) => expect(vm.memoryMiB).toBe(1024));
      firstVms = vms.map((vm) => vm.providerID);

      const machines = await waitFor(
        'the Machines to take their providerIDs',
        async () => {
          const all = await list('machines.cluster.x-k8s.io');
          return all.length === workers && all.every((m) => m.status?.initialization?.infrastructureProvisioned === true && m.spec.providerID)
            ? all
            : undefined;
        },
        120_000,
      ).catch(explain);
      expect(machines.map((m) => m.spec.providerID as string).sort()).toEqual([...firstVms].sort());
      const [deployment] = await list('machinedeployments');
      expect(deployment?.metadata.labels['topology.cluster.x-k8s.io/deployment-name']).toBe('md-0');
    },

    async rollToNewTemplate() {
      const [before] = await list('machinedeployments');
      const oldTemplate = before?.spec.template.spec.infrastructureRef.name as string;
      await apply(workerTemplate('worker-2g', 2048));
      await apply(topologyClass(ns, className, { ...classProps, workerTemplate: 'worker-2g' }));

      const vms = await waitFor(
        `${workers} new VMs with 2048 MiB, the old ones gone`,
        async () => {
          await play();
          const found = await provisionedMachines();
          if (!found?.every(({ vm, providerID }) => vm.memoryMiB === 2048 && !firstVms.includes(providerID))) return undefined;
          for (const providerID of firstVms) if (await props.vmOf(providerID)) return undefined;
          return found;
        },
        300_000,
      ).catch(explain);
      vms.forEach(({ machine }) => expect(machine.spec.memoryMiB).toBe(2048));

      // CAPI made a new template for the Cluster (its own copy of worker-2g) and pointed the MachineDeployment at it.
      const [after] = await list('machinedeployments');
      const newTemplate = after?.spec.template.spec.infrastructureRef.name as string;
      expect(newTemplate).not.toBe(oldTemplate);
      const copy = await get(crdName(backend.machineTemplate), newTemplate);
      expect(copy?.spec.template.spec.memoryMiB).toBe(2048);
      expect(copy?.metadata.annotations?.['cluster.x-k8s.io/cloned-from-name']).toBe('worker-2g');
      const topo = await waitFor(
        'TopologyReconciled=True on the Cluster',
        async () => {
          const c = await get('cluster.cluster.x-k8s.io', CLUSTER);
          return condition(c, 'TopologyReconciled')?.status === 'True' ? c : undefined;
        },
        120_000,
      ).catch(explain);
      expect(condition(topo, 'TopologyReconciled')?.reason).toBe('ReconcileSucceeded');
      // The policy refused no dry run: nothing in the manager's log says a template is immutable.
      expect(env.capiLogs()).not.toMatch(/is immutable: create a new template/);
    },
  };
}
