// The Proxmox case of `make bench`: N VirtualMachines end to end on the
// schema-held PVE simulator — created at once, Ready, deleted — through a real
// kube-apiserver, with `banlieue controller` and `banlieue provider proxmox` as
// processes. Every simulated PVE task takes a while (clones 2 s, the rest
// 0.5 s), so a provider that held a worker on a task would show in the times:
// with 10 workers and N > 10, clones would run in waves. The simulated guest
// agent reports an address as soon as a VM runs. It reports time to all Ready
// (and p50/p95 per VM), API writes per VM, PVE calls per VM (the provider's
// banlieue_backend_calls_total, by endpoint) and RSS; it asserts nothing about
// speed, only that no VM is left and no call broke PVE's schema.
import { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { proxmoxWorld, type ProxmoxWorld } from '../support/proxmox/world.js';
import { waitFor } from '../support/wait.js';
import { auditOffset, countWrites, untilWritesSettle, type WriteCounts } from '../support/audit-writes.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { envInt, percentiles, round, seconds, stopRole, tail } from './bench-stats.js';
import { processMemory, type ProcessMemory } from './process-memory.js';
import { textTable } from './text-table.js';
import type { Teardown } from './teardown.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
const NS = 'bench-proxmox';
const PREFIX = 'bench-pve-';
/** Simulated PVE task run times: long enough that a worker waiting on one would show. */
const TASK_DELAY_MS = { qmclone: 2_000, default: 500 };
const PROVIDER_FLAGS: readonly string[] = ['--no-leader-elect', '--namespace', NS, '--poll-period', '1', '--rediscover-period', '5'];
const POLL_MS = 250;
const QUIET_MS = 5_000;

interface Env {
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly sim: ProxmoxSim;
  readonly world: ProxmoxWorld;
  readonly controller: RoleProcess;
  readonly provider: RoleProcess;
}

interface Memory {
  readonly controller: ProcessMemory;
  readonly provider: ProcessMemory;
}

interface Phase {
  readonly durationMs: number;
  readonly writes: WriteCounts;
  readonly settled: boolean;
  readonly memory: Memory;
  /** PVE calls of the provider in the phase, by endpoint (`GET /nodes/{node}/qemu/{vmid}/config`…). */
  readonly pveCalls: Readonly<Record<string, number>>;
  /** Per VM, ms from its create to Ready (create phase only). */
  readonly readyMs: readonly number[];
}

export const proxmoxBench: BenchCase = {
  name: 'proxmox',
  async run(teardown, say) {
    const n = envInt('BENCH_VMS', 30);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 600) * 1000;
    const env = await setUp(teardown, say);
    try {
      const names = Array.from({ length: n }, (_, i) => `${PREFIX}${String(i).padStart(3, '0')}`);
      const startMemory = memoryOf(env);
      const created = await provision(env, names, timeoutMs, say);
      const deleted = await deprovision(env, names, timeoutMs, say);
      const left = [...env.sim.state.vms.values()].filter((vm) => String(vm.config.name ?? '').startsWith(PREFIX));
      if (left.length > 0) throw new Error(`${left.length} VMs left in the simulator after their VirtualMachines were deleted`);
      if (env.sim.violations.length > 0)
        throw new Error(`${env.sim.violations.length} calls broke the PVE schema: ${JSON.stringify(env.sim.violations.slice(0, 3))}`);
      return report(n, startMemory, created, deleted);
    } catch (err) {
      say(`--- provider-proxmox log tail ---\n${tail(env.provider.logs())}\n--- controller log tail ---\n${tail(env.controller.logs())}`);
      throw err;
    }
  },
};

async function setUp(teardown: Teardown, say: (m: string) => void): Promise<Env> {
  say('Starting kube-apiserver, etcd and kube-controller-manager');
  const cp = await ControlPlane.start(await buildTools());
  teardown.defer('control plane', () => cp.stop());
  await applyCrdsFromDist(cp);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
  const user = new ServerSideApply(api, 'banlieue-bench');
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  say(`Starting the PVE simulator (3 nodes, task run times ${JSON.stringify(TASK_DELAY_MS)} ms)`);
  const sim = await startProxmoxSim({ taskDelayMs: TASK_DELAY_MS });
  teardown.defer('PVE simulator', () => sim.stop());
  const world = proxmoxWorld(NS, sim, 'bench');
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await user.apply(obj);

  say('Starting banlieue controller and banlieue provider proxmox');
  const controller = await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect', '--namespace', NS]);
  teardown.defer('controller', () => stopRole(controller));
  const provider = await startRole(['provider', 'proxmox', '--kubeconfig', cp.kubeconfigPath, ...PROVIDER_FLAGS]);
  teardown.defer('provider', () => stopRole(provider));
  await waitFor('Provider pve Ready', async () => isReady(await api.get<Obj>(world.provider)), 120_000);
  return { cp, api, user, sim, world, controller, provider };
}

async function provision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<Phase> {
  const from = auditOffset(env.cp.auditLogPath);
  const callsBefore = await pveCalls(env);
  const createdAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const start = performance.now();
  await Promise.all(
    names.map(async (name) => {
      await env.user.apply({
        ...vmRef(name),
        spec: { classRef: { name: env.world.vmClass.metadata.name }, imageRef: { name: env.world.vmImage.metadata.name } },
      });
      createdAt.set(name, performance.now());
    }),
  );
  say(`Created ${names.length} VirtualMachines in ${seconds(performance.now() - start)}`);
  let lastSaid = start;
  for (;;) {
    const now = performance.now();
    for (const vm of await list(env.api, CORE, 'VirtualMachine')) if (isReady(vm) && !readyAt.has(vm.metadata.name)) readyAt.set(vm.metadata.name, now);
    if (readyAt.size === names.length) break;
    if (now - start > timeoutMs) throw new Error(`after ${seconds(timeoutMs)}: ${readyAt.size} of ${names.length} Ready`);
    if (now - lastSaid > 5_000) {
      const cloned = [...env.sim.state.vms.values()].filter((vm) => String(vm.config.name ?? '').startsWith(PREFIX)).length;
      say(`${seconds(now - start)}: ${cloned} VMs in the simulator, ${readyAt.size} of ${names.length} Ready`);
      lastSaid = now;
    }
    await delay(POLL_MS);
  }
  const durationMs = Math.max(...readyAt.values()) - start;
  say(`All ${names.length} Ready after ${seconds(durationMs)}; waiting for banlieue's writes to settle`);
  const memory = memoryOf(env);
  const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
  return {
    durationMs,
    writes: countWrites(env.cp.auditLogPath, from),
    settled,
    memory,
    pveCalls: since(callsBefore, await pveCalls(env)),
    readyMs: names.map((name) => (readyAt.get(name) ?? NaN) - (createdAt.get(name) ?? NaN)),
  };
}

async function deprovision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<Phase> {
  const from = auditOffset(env.cp.auditLogPath);
  const callsBefore = await pveCalls(env);
  const start = performance.now();
  await Promise.all(names.map(async (name) => env.api.request('DELETE', await env.api.pathOf(vmRef(name)))));
  await waitFor(
    'every VirtualMachine and ProxmoxMachine to be gone',
    async () => (await list(env.api, CORE, 'VirtualMachine')).length + (await list(env.api, INFRA, 'ProxmoxMachine')).length === 0,
    timeoutMs,
  );
  const durationMs = performance.now() - start;
  say(`All ${names.length} gone after ${seconds(durationMs)}`);
  const memory = memoryOf(env);
  const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
  return { durationMs, writes: countWrites(env.cp.auditLogPath, from), settled, memory, pveCalls: since(callsBefore, await pveCalls(env)), readyMs: [] };
}

/** The provider's banlieue_backend_calls_total by method (the endpoint's `METHOD /path`). */
async function pveCalls(env: Env): Promise<Record<string, number>> {
  const res = await fetch(`http://127.0.0.1:${env.provider.metricsPort}/metrics`);
  const byMethod: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const match = /^banlieue_backend_calls_total\{[^}]*method="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (match?.[1] !== undefined) byMethod[match[1]] = (byMethod[match[1]] ?? 0) + Number(match[2]);
  }
  return byMethod;
}

const since = (before: Record<string, number>, after: Record<string, number>): Record<string, number> =>
  Object.fromEntries(
    Object.entries(after)
      .map(([m, n]) => [m, n - (before[m] ?? 0)])
      .filter(([, n]) => n !== 0),
  );

const total = (calls: Readonly<Record<string, number>>): number => Object.values(calls).reduce((a, b) => a + b, 0);

function report(n: number, startMemory: Memory, created: Phase, deleted: Phase): BenchReport {
  const ready = percentiles([...created.readyMs]);
  const roles = [...new Set([...Object.keys(created.writes), ...Object.keys(deleted.writes)])].sort();
  const writesPerVm = (w: WriteCounts): Record<string, number> => ({
    ...Object.fromEntries(roles.map((role) => [role, round((w[role]?.total ?? 0) / n)])),
    total: round(Object.values(w).reduce((sum, r) => sum + r.total, 0) / n),
  });
  const rss = (role: keyof Memory): Record<string, number> => ({
    start: startMemory[role].rssMiB,
    allReady: created.memory[role].rssMiB,
    allGone: deleted.memory[role].rssMiB,
    peak: deleted.memory[role].peakMiB,
  });
  const result = {
    vms: n,
    simulator: { nodes: 3, taskDelayMs: TASK_DELAY_MS },
    providerFlags: PROVIDER_FLAGS.slice(3).join(' '),
    timeToAllReadyMs: Math.round(created.durationMs),
    perVmReadyMs: ready,
    timeToAllGoneMs: Math.round(deleted.durationMs),
    apiWritesPerVm: { create: writesPerVm(created.writes), delete: writesPerVm(deleted.writes) },
    writesSettled: { create: created.settled, delete: deleted.settled },
    pveCallsPerVm: { create: round(total(created.pveCalls) / n), delete: round(total(deleted.pveCalls) / n) },
    pveCallsByEndpoint: { create: created.pveCalls, delete: deleted.pveCalls },
    rssMiB: { 'provider-proxmox': rss('provider'), controller: rss('controller') },
    node: process.version,
  };
  const writeRow = (role: string): string[] => [role, ...(['create', 'delete'] as const).map((phase) => String(result.apiWritesPerVm[phase][role] ?? 0))];
  const memRow = (label: string, r: Record<string, number>): string[] => [label, ...['start', 'allReady', 'allGone', 'peak'].map((k) => String(r[k]))];
  const endpoints = [...new Set([...Object.keys(created.pveCalls), ...Object.keys(deleted.pveCalls)])].sort();
  const table = [
    `proxmox: ${n} VirtualMachines on the PVE simulator (3 nodes; clone tasks ${TASK_DELAY_MS.qmclone / 1000} s, others ${TASK_DELAY_MS.default / 1000} s), provider ${result.providerFlags}`,
    textTable([
      ['create → all Ready', seconds(created.durationMs)],
      ['per VM Ready p50 / p95', `${seconds(ready.p50)} / ${seconds(ready.p95)}`],
      ['delete → all gone', seconds(deleted.durationMs)],
    ]),
    `  API writes per VM (audit log${created.settled && deleted.settled ? '' : '; WRITES DID NOT SETTLE'}):`,
    textTable([['', 'create', 'delete'], ...roles.map(writeRow), writeRow('total')], '    '),
    `  PVE calls per VM: ${result.pveCallsPerVm.create} create, ${result.pveCallsPerVm.delete} delete; by endpoint, per VM:`,
    textTable(
      [['', 'create', 'delete'], ...endpoints.map((e) => [e, String(round((created.pveCalls[e] ?? 0) / n)), String(round((deleted.pveCalls[e] ?? 0) / n))])],
      '    ',
    ),
    '  RSS (MiB, /proc/<pid>/status; roles run from the working tree bundle):',
    textTable(
      [
        ['', 'start', 'all Ready', 'all gone', 'peak'],
        memRow('provider-proxmox', result.rssMiB['provider-proxmox']),
        memRow('controller', result.rssMiB.controller),
      ],
      '    ',
    ),
  ].join('\n');
  return { table, result };
}

const vmRef = (name: string): Obj => ({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: NS } });

async function list(api: KubeApi, apiVersion: string, kind: string): Promise<Obj[]> {
  return (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion, kind, metadata: { namespace: NS } }))).items;
}

function isReady(obj: Obj | undefined): boolean {
  return ((obj?.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === ConditionType.Ready && c.status === 'True');
}

function memoryOf(env: Env): Memory {
  return { controller: processMemory(env.controller.child.pid), provider: processMemory(env.provider.child.pid) };
}
