// `make bench-capv`: CAPV's manager and banlieue side by side, each provisioning
// one MachineDeployment of N Machines through the same kube-apiserver, real CAPI
// manager and vcsim, one after the other (the other side's processes stopped,
// its VMs gone). The clock runs from the MachineDeployment's creation until
// every Machine has a providerID, infrastructure provisioned and an address.
// vCenter calls are counted by a proxy in front of vcsim, by User-Agent (the
// harness's own client talks to vcsim directly); API writes from the audit
// log, by user (each side runs as users of its own); CPU and RSS of the infra
// side from /proc. The bench plays VMware Tools the same way for both: a guest
// IP on each VM as soon as it appears in vcsim. It reports, asserts nothing.
//
// Each side runs BENCH_CAPV_RUNS times at each size (default 3), the sides
// taking turns; its run of median time stands for it in the table (single runs
// of 50 Machines vary by about ±2 s on a 2-core machine).
//
// BENCH_CAPV_MACHINES: the sizes, comma-separated (default 50,200);
// BENCH_TIMEOUT_S: how long one side may take to provision (default 900);
// BENCH_LOG_DIR: keep each process's whole log there (keepLog);
// BENCH_CAPV_SIDES: the sides to run, comma-separated (default CAPV,banlieue;
// one side alone gives its rows and steps, no ratio).
import { KubeConfig } from '@kubernetes/client-node';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ManagedObjectReference } from '../../controller/backends/vsphere/client/vim-types.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { API_VERSION, INFRA_GROUP } from '../../infra/api/kind.js';
import { startCapi } from '../contract/capi-environment.js';
import { capiCluster, workersDeployment, type Manifest } from '../contract/capi-objects.js';
import { startVcsim } from '../peers/vsphere/vcsim.js';
import { auditOffset, countWrites, untilWritesSettle } from '../support/audit-writes.js';
import { buildCapv, buildTools, ControlPlane } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import { waitFor } from '../support/wait.js';
import { callsSince, startVcenterCallCounter, type VcenterCallCounter } from '../support/vsphere/vcenter-call-counter.js';
import { makeTemplate, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import type { BenchCase } from './bench-case.js';
import { envInt, keepLog, seconds, stopRole, tail } from './bench-stats.js';
import { CAPV_GROUP, installCapv, startCapvManager, type CapvManager } from './capv-manager.js';
import { capvReport, type SideResult } from './capv-report.js';
import { watchMachines, type MachineProgress } from './capv-machines.js';
import { cpuSeconds } from './process-cpu.js';
import { processMemory } from './process-memory.js';
import type { Teardown } from './teardown.js';

const TEMPLATE = 'bench-ubuntu';
const CLUSTER = 'bench';
/** The users each side's processes run as: the audit log tells their writes apart by them. */
const CAPV_USERS = ['capv'] as const;
const BANLIEUE_USERS = ['banlieue-controller', 'banlieue-provider'] as const;
/** The CAPI manager's user (capi-environment.ts): its writes show what each side's pace costs CAPI. */
const CAPI_USER = 'system:serviceaccount:capi-system:capi-manager';
/** banlieue's provider as the vSphere bench runs it: a 1 s poll, so that a guest IP is seen soon after Tools reports it. */
const PROVIDER_FLAGS = ['--poll-period', '1', '--rediscover-period', '5'];
/** How often the harness looks for new VMs in vcsim to play Tools on. */
const POLL_MS = 500;
/** No write of the side's users for this long ends its window. */
const QUIET_MS = 5_000;

interface Env {
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  /** The harness's own vcsim session, not through the counting proxy. */
  readonly client: VsphereClient;
  readonly counter: VcenterCallCounter;
  readonly capv: { readonly binary: string; readonly version: string };
  /** The processes both sides share, by name: what each side's window costs them is reported beside its own. */
  readonly shared: Readonly<Record<string, number>>;
}

/** One infrastructure provider under test: its objects and its processes. */
interface Side {
  readonly name: 'CAPV' | 'banlieue';
  readonly namespace: string;
  readonly infraGroup: string;
  /** The version of infraGroup the bench writes and watches. */
  readonly infraVersion: string;
  readonly users: readonly string[];
  /** The InfraCluster, the InfraMachineTemplate `workers` and whatever else it needs before the Cluster. */
  objects(env: Env): object[];
  /** Start its processes; they are stopped by the returned function. */
  start(env: Env): Promise<SideProcesses>;
}

interface SideProcesses {
  readonly pids: number[];
  stop(): Promise<void>;
  /** The tail of each process's log. */
  logs(): string;
  /** Each process's whole log kept as `<label>-<process>` (keepLog). */
  keepLogs(label: string): void;
}

export const capvBench: BenchCase = {
  name: 'capv',
  async run(teardown, say) {
    const sizes = machineCounts(process.env.BENCH_CAPV_MACHINES || '50,200');
    const sides = chosenSides(process.env.BENCH_CAPV_SIDES || 'CAPV,banlieue');
    const runs = envInt('BENCH_CAPV_RUNS', 3);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 900) * 1000;
    const env = await setUp(teardown, say);
    const results: SideResult[] = [];
    // The sides take turns, so that a slow spell of the machine falls on both.
    for (const n of sizes) {
      for (let run = 1; run <= runs; run++) {
        for (const side of sides) results.push(await measure(env, side, n, { run, of: runs }, timeoutMs, say));
      }
    }
    return capvReport(results, { capv: env.capv.version, providerFlags: PROVIDER_FLAGS.join(' ') });
  },
};

function machineCounts(raw: string): number[] {
  return raw.split(',').map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_CAPV_MACHINES must be positive integers separated by commas, got "${raw}"`);
    return n;
  });
}

function chosenSides(raw: string): Side[] {
  const names = raw.split(',').map((s) => s.trim());
  const unknown = names.filter((name) => ![capvSide, banlieueSide].some((side) => side.name === name));
  if (unknown.length > 0) throw new Error(`BENCH_CAPV_SIDES names CAPV and banlieue, got "${raw}"`);
  return [capvSide, banlieueSide].filter((side) => names.includes(side.name));
}

async function setUp(teardown: Teardown, say: (m: string) => void): Promise<Env> {
  say('Building (or finding cached) the tools and CAPV');
  const tools = await buildTools();
  const capv = await buildCapv();
  say('Starting kube-apiserver, etcd, kube-controller-manager and the CAPI manager');
  const cp = await ControlPlane.start(tools, { users: [...CAPV_USERS, ...BANLIEUE_USERS] });
  teardown.defer('control plane', () => cp.stop());
  await applyCrdsFromDist(cp);
  // banlieue's infrastructure kinds aggregated to CAPI's manager role, as its components install it.
  const aggregated = readdirSync('dist').find((f) => f.endsWith('-banlieue-capi-infrastructure.k8s.yaml'));
  if (!aggregated) throw new Error('dist/ has no banlieue-capi-infrastructure chart: run make synth');
  await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-bench', '-f', join('dist', aggregated)]);
  await installCapv(cp, capv.moduleDir);
  const capi = await startCapi(cp, tools);
  teardown.defer('CAPI manager', () => capi.stop());

  say('Starting vcsim (1 datacenter × 2 clusters, vAPI REST) and the counting proxy in front of it');
  // One datacenter: vcsim clones a template only within its own, and banlieue spreads Machines over every failure domain.
  const vcsim = await startVcsim({ datacenters: 1, clusters: 2 });
  teardown.defer('vcsim', () => vcsim.stop());
  const client = await vcsimClient(vcsim);
  teardown.defer('vcsim session', () => client.close());
  await makeTemplate(client, TEMPLATE);
  const counter = await startVcenterCallCounter(vcsim);
  teardown.defer('vCenter call counter', () => counter.stop());

  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
  // The harness too: it watches the Machines, plays Tools and counts vCenter calls through its proxy, on the same 2 cores.
  const shared = { 'kube-apiserver': cp.pidOf('kube-apiserver'), etcd: cp.pidOf('etcd'), 'CAPI manager': capi.pid, vcsim: vcsim.pid, harness: process.pid };
  return { cp, api, client, counter, capv: { binary: capv.manager, version: capv.version }, shared };
}

const capvSide: Side = {
  name: 'CAPV',
  namespace: 'bench-capv',
  infraGroup: CAPV_GROUP,
  infraVersion: 'v1beta2',
  users: CAPV_USERS,
  objects(env) {
    const server = new URL(env.counter.vcenter.url).host;
    const { thumbprint } = env.counter;
    return [
      {
        apiVersion: `${CAPV_GROUP}/${this.infraVersion}`,
        kind: 'VSphereCluster',
        metadata: { name: CLUSTER, namespace: this.namespace },
        spec: { server, thumbprint, controlPlaneEndpoint: { host: '192.0.2.60', port: 6443 } },
      },
      {
        apiVersion: `${CAPV_GROUP}/${this.infraVersion}`,
        kind: 'VSphereMachineTemplate',
        metadata: { name: 'workers', namespace: this.namespace },
        spec: {
          template: {
            spec: {
              server,
              thumbprint,
              datacenter: 'DC0',
              template: TEMPLATE,
              cloneMode: 'fullClone',
              folder: '/DC0/vm',
              datastore: 'LocalDS_0',
              resourcePool: '/DC0/host/DC0_C0/Resources',
              network: { devices: [{ networkName: 'VM Network', dhcp4: true }] },
              numCPUs: 2,
              memoryMiB: 1024,
            },
          },
        },
      },
    ];
  },
  async start(env) {
    const manager: CapvManager = await startCapvManager({
      binary: env.capv.binary,
      kubeconfig: env.cp.kubeconfigOf('capv'),
      namespace: this.namespace,
      vcenter: env.counter.vcenter,
      dir: join(env.cp.dir, 'capv'),
    });
    return {
      pids: [manager.child.pid ?? -1],
      stop: () => manager.stop(),
      logs: () => tail(manager.logs(), 40),
      keepLogs: (label) => keepLog(`${label}-capv`, manager.logs()),
    };
  },
};

const banlieueSide: Side = {
  name: 'banlieue',
  namespace: 'bench-banlieue',
  infraGroup: INFRA_GROUP,
  infraVersion: API_VERSION,
  users: BANLIEUE_USERS,
  objects(env) {
    const world = vsphereWorld(this.namespace, env.counter.vcenter, 'capv-bench', TEMPLATE);
    return [
      world.secret,
      world.provider,
      world.vmImage,
      {
        apiVersion: `${INFRA_GROUP}/${this.infraVersion}`,
        kind: 'VSphereCluster',
        metadata: { name: CLUSTER, namespace: this.namespace },
        spec: { controlPlaneEndpoint: { host: '192.0.2.60', port: 6443 }, providerRefs: [{ name: 'vcsim' }] },
      },
      {
        apiVersion: `${INFRA_GROUP}/${this.infraVersion}`,
        kind: 'VSphereMachineTemplate',
        metadata: { name: 'workers', namespace: this.namespace },
        spec: { template: { spec: { template: TEMPLATE, numCpus: 2, memoryMiB: 1024, network: [{ name: 'eth0', portGroup: 'VM Network' }] } } },
      },
    ];
  },
  async start(env) {
    const ns = ['--no-leader-elect', '--namespace', this.namespace];
    const controller: RoleProcess = await startRole(['controller', '--kubeconfig', env.cp.kubeconfigOf('banlieue-controller'), ...ns]);
    const provider: RoleProcess = await startRole(['provider', 'vsphere', '--kubeconfig', env.cp.kubeconfigOf('banlieue-provider'), ...ns, ...PROVIDER_FLAGS]);
    return {
      pids: [controller.child.pid ?? -1, provider.child.pid ?? -1],
      stop: async () => {
        await stopRole(provider);
        await stopRole(controller);
      },
      logs: () => `--- provider ---\n${tail(provider.logs())}\n--- controller ---\n${tail(controller.logs())}`,
      keepLogs: (label) => {
        keepLog(`${label}-banlieue-provider`, provider.logs());
        keepLog(`${label}-banlieue-controller`, controller.logs());
      },
    };
  },
};

/** One side at size n: set up its Cluster, then time its MachineDeployment; scale it to zero and stop its processes afterwards. */
async function measure(env: Env, side: Side, n: number, turn: { run: number; of: number }, timeoutMs: number, say: (m: string) => void): Promise<SideResult> {
  const ns = side.namespace;
  const label = `${n}-run${turn.run}`;
  const saying = (m: string): void => say(`${side.name}, ${n} Machines (run ${turn.run} of ${turn.of}): ${m}`);
  await applyAll(env, [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }]);
  await applyAll(env, [
    ...side.objects(env),
    // A bootstrap provider's output, as CAPI's bootstrap contract shapes it.
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'workers-bootstrap', namespace: ns },
      stringData: { value: '#cloud-config\n', format: 'cloud-config' },
    },
    capiCluster(ns, CLUSTER, 'VSphereCluster', side.infraGroup),
  ]);
  saying('starting its processes');
  const processes = await side.start(env);
  try {
    await waitFor(
      `${side.name}: the Cluster's infrastructure to be provisioned`,
      async () =>
        (await env.api.get<Manifest & { status?: { initialization?: { infrastructureProvisioned?: boolean } } }>(clusterRef(ns))).status?.initialization
          ?.infrastructureProvisioned === true,
      120_000,
    );
    const from = auditOffset(env.cp.auditLogPath);
    const callsBefore = env.counter.counts();
    const cpuBefore = processes.pids.map(cpuSeconds);
    const sharedCpuBefore = cpuOf(env.shared);
    const watching = await watchMachines(env.api, ns, `${side.infraGroup}/${side.infraVersion}`);
    const startedAt = performance.now();
    const startedWall = new Date().toISOString();
    let durationMs: number;
    try {
      await applyAll(env, [workersDeployment(ns, CLUSTER, n, 'VSphereMachineTemplate', side.infraGroup)]);
      durationMs = (await untilProvisioned(env, watching.progress, n, startedAt, timeoutMs, saying)) - startedAt;
    } finally {
      watching.stop();
    }
    const capiWrites = countWrites(env.cp.auditLogPath, from, { users: [CAPI_USER] })[CAPI_USER];
    // CPU, memory and vCenter calls when the last Machine is provisioned: the work of provisioning, not of idling after it.
    const memory = processes.pids.map((pid) => processMemory(pid));
    const cpu = processes.pids.map((pid, i) => cpuSeconds(pid) - (cpuBefore[i] ?? 0));
    const sharedCpu = cpuOf(env.shared);
    const sharedCpuSeconds = Object.fromEntries(Object.entries(sharedCpu).map(([name, s]) => [name, s - (sharedCpuBefore[name] ?? 0)]));
    const vcenterCalls = callsSince(callsBefore, env.counter.counts());
    saying(`all provisioned after ${seconds(durationMs)}; waiting for its writes to settle`);
    const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000, side.users);
    const result: SideResult = {
      side: side.name,
      machines: n,
      run: turn.run,
      startedAt,
      durationMs,
      progress: watching.progress,
      writes: countWrites(env.cp.auditLogPath, from, { users: side.users }),
      writesSettled: settled,
      ...(capiWrites ? { capiWrites } : {}),
      vcenterCalls,
      cpuSeconds: cpu,
      sharedCpuSeconds,
      rssMiB: memory.map((m) => m.rssMiB),
      peakMiB: memory.map((m) => m.peakMiB),
    };
    keepLog(`${label}-${side.name}-machines`, stepsByMachine(watching.progress, startedAt, startedWall));
    await scaleToZero(env, ns, say);
    return result;
  } catch (err) {
    say(`${side.name} log tail:\n${processes.logs()}`);
    throw err;
  } finally {
    processes.keepLogs(label);
    await processes.stop();
  }
}

const cpuOf = (pids: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));

/** A JSON line per Machine, each step in ms from the MachineDeployment's creation, after a line with that creation's time (to read beside the roles' logs). */
function stepsByMachine(progress: ReadonlyMap<string, MachineProgress>, startedAt: number, startedWall: string): string {
  const lines = [...progress].map(([name, p]) =>
    JSON.stringify({ machine: name, ...Object.fromEntries(Object.entries(p).map(([step, at]) => [step, Math.round(at - startedAt)])) }),
  );
  return [JSON.stringify({ machineDeploymentCreated: startedWall }), ...lines].join('\n');
}

/** Plays Tools on each new VM until every Machine is provisioned with an address; resolves to when the last one was. */
async function untilProvisioned(
  env: Env,
  progress: Map<string, MachineProgress>,
  n: number,
  start: number,
  timeoutMs: number,
  say: (m: string) => void,
): Promise<number> {
  const playing = new Set<string>();
  let lastSaid = start;
  let address = 0;
  for (;;) {
    const done = [...progress.values()].filter((p) => p.doneAt !== undefined);
    if (done.length === n) return Math.max(...done.map((p) => p.doneAt ?? 0));
    const now = performance.now();
    const vms = await workerGuests(env.client);
    for (const vm of vms) {
      const p = progress.get(vm.name);
      if (p) p.cloneSeenAt ??= now;
      if (vm.hasAddress || playing.has(vm.name)) continue;
      // What VMware Tools reports once the guest is up; a VM still busy with its own task is tried again next round.
      playing.add(vm.name);
      address += 1;
      const ip = `10.40.${Math.floor(address / 250) % 250}.${(address % 250) + 1}`;
      void env.client.vms
        .reconfigure(vm.ref, { extraConfig: { 'SET.guest.ipAddress': ip } })
        .catch(() => undefined)
        .finally(() => playing.delete(vm.name));
    }
    if (now - start > timeoutMs || now - lastSaid > 10_000) {
      const count = (step: keyof MachineProgress): number => [...progress.values()].filter((p) => p[step] !== undefined).length;
      const status = `Machines ${progress.size}, infra ${count('infraAt')}, VMs ${vms.length}, providerID ${count('providerIdAt')}, provisioned ${count('doneAt')} of ${n}`;
      if (now - start > timeoutMs) throw new Error(`after ${seconds(timeoutMs)}: ${status}`);
      say(`${seconds(now - start)}: ${status}`);
      lastSaid = now;
    }
    await delay(POLL_MS);
  }
}

/** The Machines' VMs in vcsim: only the paths the harness reads, so that its rounds cost vcsim little. */
async function workerGuests(client: VsphereClient): Promise<{ ref: ManagedObjectReference; name: string; hasAddress: boolean }[]> {
  const contents = await client.properties.listManagedObjects(client.session.serviceContent.rootFolder, [
    { type: 'VirtualMachine', pathSet: ['name', 'config.template', 'guest.ipAddress'] },
  ]);
  return contents
    .map((c) => ({
      ref: c.obj,
      name: c.props.get('name')?.text ?? '',
      template: c.props.get('config.template')?.text === 'true',
      hasAddress: c.props.has('guest.ipAddress'),
    }))
    .filter((vm) => !vm.template && vm.name.startsWith('workers-'));
}

async function scaleToZero(env: Env, ns: string, say: (m: string) => void): Promise<void> {
  const start = performance.now();
  await env.cp.kubectl(['delete', 'machinedeployments.cluster.x-k8s.io', 'workers', '-n', ns, '--wait=false']);
  await waitFor(
    `every Machine of ${ns} and its VM to be gone`,
    async () => {
      const machines = JSON.parse(await env.cp.kubectl(['get', 'machines.cluster.x-k8s.io', '-n', ns, '-o', 'json'])) as { items: unknown[] };
      const vms = (await env.client.vms.list(env.client.session.serviceContent.rootFolder)).filter((vm) => !vm.template && vm.name.startsWith('workers-'));
      return machines.items.length === 0 && vms.length === 0;
    },
    900_000,
  );
  say(`${ns}: every Machine and VM gone after ${seconds(performance.now() - start)}`);
}

async function applyAll(env: Env, objects: readonly object[]): Promise<void> {
  await env.cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-bench', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n---\n'));
}

const clusterRef = (ns: string): Manifest & { apiVersion: string; kind: string; metadata: { name: string; namespace: string } } => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name: CLUSTER, namespace: ns },
});
