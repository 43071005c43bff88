// The Cloud Hypervisor case of `make bench`: N VirtualMachines end to end on one
// test host (the VMM simulator as the VMM, one process per machine, taps in a
// network namespace of the bench's own), through a real kube-apiserver, with
// `banlieue controller` and `banlieue provider cloud-hypervisor` as processes.
// Each VM has a static address, so it is Ready once its VMM runs its VM. It
// reports time to all Ready (p50/p95 per VM), API writes per VM, RSS of the
// roles and VMM processes; it asserts nothing about speed.
import { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import { processesMentioning, simulatorPeer } from '../peers/cloud-hypervisor/vmm-peers.js';
import { chWorld, createTestHost, hostConfigEnv, machineDirs, type TestHost } from '../support/cloud-hypervisor/host.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { auditOffset, countWrites, untilWritesSettle, type WriteCounts } from '../support/audit-writes.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { envInt, percentiles, round, seconds, stopRole, tail } from './bench-stats.js';
import { processMemory } from './process-memory.js';
import type { Teardown } from './teardown.js';
import { textTable } from './text-table.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
const NS = 'bench-cloud-hypervisor';
const PREFIX = 'bench-ch-';
const PROVIDER_FLAGS: readonly string[] = ['--no-leader-elect', '--namespace', NS, '--poll-period', '1', '--rediscover-period', '5'];
const POLL_MS = 250;
const QUIET_MS = 5_000;

interface Env {
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly host: TestHost;
  readonly world: ReturnType<typeof chWorld>;
  readonly controller: RoleProcess;
  readonly provider: RoleProcess;
}

interface Phase {
  readonly durationMs: number;
  readonly writes: WriteCounts;
  readonly settled: boolean;
  readonly rssMiB: { readonly controller: number; readonly provider: number; readonly vmms: number };
}

export const cloudHypervisorBench: BenchCase = {
  name: 'cloud-hypervisor',
  async run(teardown, say) {
    const n = envInt('BENCH_VMS', 20);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 600) * 1000;
    const env = await setUp(teardown, say);
    try {
      const names = Array.from({ length: n }, (_, i) => `${PREFIX}${String(i).padStart(3, '0')}`);
      const { phase: created, perVmReadyMs } = await provision(env, names, timeoutMs, say);
      const deleted = await deprovision(env, names, timeoutMs, say);
      return report(n, created, perVmReadyMs, deleted);
    } catch (err) {
      say(`--- provider-cloud-hypervisor log tail ---\n${tail(env.provider.logs())}\n--- controller log tail ---\n${tail(env.controller.logs())}`);
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
  say('Making the test host: directories, a network namespace with a bridge, an image, the VMM simulator');
  const host = await createTestHost(simulatorPeer, { simulator: { guest: 'acpi' } });
  teardown.defer('test host', () => host.remove());
  const world = chWorld(NS, host, 'bench');
  for (const obj of [world.provider, world.vmClass, world.vmImage]) await user.apply(obj);
  say('Starting banlieue controller and banlieue provider cloud-hypervisor');
  const controller = await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect', '--namespace', NS]);
  teardown.defer('controller', () => stopRole(controller));
  const provider = await startRole(['provider', 'cloud-hypervisor', '--kubeconfig', cp.kubeconfigPath, ...PROVIDER_FLAGS], { env: hostConfigEnv(host) });
  teardown.defer('provider', () => stopRole(provider));
  await waitFor('Provider host-a Ready', async () => isReady(await api.get<Obj>(world.provider)), 120_000);
  return { cp, api, user, host, world, controller, provider };
}

async function provision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<{ phase: Phase; perVmReadyMs: number[] }> {
  const from = auditOffset(env.cp.auditLogPath);
  const createdAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const start = performance.now();
  await Promise.all(
    names.map(async (name, i) => {
      await env.user.apply(virtualMachine(env, name, `10.90.${Math.floor(i / 250)}.${(i % 250) + 1}`));
      createdAt.set(name, performance.now());
    }),
  );
  say(`Created ${names.length} VirtualMachines in ${seconds(performance.now() - start)}`);
  let lastSaid = start;
  for (;;) {
    const now = performance.now();
    for (const vm of await list(env.api, CORE, 'VirtualMachine')) if (isReady(vm) && !readyAt.has(vm.metadata.name)) readyAt.set(vm.metadata.name, now);
    if (readyAt.size === names.length) break;
    if (now - start > timeoutMs) throw new Error(`after ${seconds(timeoutMs)}: Ready ${readyAt.size} of ${names.length}`);
    if (now - lastSaid > 5_000) {
      say(`${seconds(now - start)}: Ready ${readyAt.size} of ${names.length}, VMM processes ${processesMentioning(env.host.config.stateRoot).length}`);
      lastSaid = now;
    }
    await delay(POLL_MS);
  }
  const durationMs = Math.max(...readyAt.values()) - start;
  say(`All ${names.length} Ready after ${seconds(durationMs)}; waiting for banlieue's writes to settle`);
  const rssMiB = memory(env);
  const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
  const perVmReadyMs = names.map((name) => (readyAt.get(name) ?? NaN) - (createdAt.get(name) ?? NaN));
  return { phase: { durationMs, writes: countWrites(env.cp.auditLogPath, from), settled, rssMiB }, perVmReadyMs };
}

async function deprovision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<Phase & { readonly left: number }> {
  const from = auditOffset(env.cp.auditLogPath);
  const start = performance.now();
  await Promise.all(
    names.map(async (name) => env.api.request('DELETE', await env.api.pathOf({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: NS } }))),
  );
  await waitFor(
    'every VirtualMachine and CloudHypervisorMachine to be gone',
    async () => (await list(env.api, CORE, 'VirtualMachine')).length + (await list(env.api, INFRA, 'CloudHypervisorMachine')).length === 0,
    timeoutMs,
  );
  const durationMs = performance.now() - start;
  say(`All ${names.length} gone after ${seconds(durationMs)}`);
  const left = machineDirs(env.host).length + processesMentioning(env.host.config.stateRoot).length;
  if (left > 0) throw new Error(`${left} machine directories or VMM processes left on the host after their VirtualMachines were deleted`);
  const rssMiB = memory(env);
  const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
  return { durationMs, writes: countWrites(env.cp.auditLogPath, from), settled, rssMiB, left };
}

function report(n: number, created: Phase, perVmReadyMs: number[], deleted: Phase & { left: number }): BenchReport {
  const ready = percentiles(perVmReadyMs);
  const roles = [...new Set([...Object.keys(created.writes), ...Object.keys(deleted.writes)])].sort();
  const perVm = (w: WriteCounts): Record<string, number> => ({
    ...Object.fromEntries(roles.map((role) => [role, round((w[role]?.total ?? 0) / n)])),
    total: round(Object.values(w).reduce((sum, r) => sum + r.total, 0) / n),
  });
  const result = {
    vms: n,
    vmm: 'simulator',
    providerFlags: PROVIDER_FLAGS.slice(3).join(' '),
    timeToAllReadyMs: Math.round(created.durationMs),
    perVmReadyMs: ready,
    timeToAllGoneMs: Math.round(deleted.durationMs),
    hostLeft: deleted.left,
    apiWritesPerVm: { create: perVm(created.writes), delete: perVm(deleted.writes) },
    writesSettled: { create: created.settled, delete: deleted.settled },
    rssMiB: { allReady: created.rssMiB, allGone: deleted.rssMiB },
    node: process.version,
  };
  const writeRow = (role: string): string[] => [role, String(result.apiWritesPerVm.create[role] ?? 0), String(result.apiWritesPerVm.delete[role] ?? 0)];
  const table = [
    `cloud-hypervisor: ${n} VirtualMachines on one host (VMM simulator, one process per VM), provider ${result.providerFlags}`,
    textTable([
      ['create → all Ready', seconds(created.durationMs)],
      ['delete → all gone', seconds(deleted.durationMs)],
      ['left on the host', String(deleted.left)],
    ]),
    '  per VM, from its create to Ready:',
    textTable(
      [
        ['', 'p50', 'p95'],
        ['Ready', seconds(ready.p50), seconds(ready.p95)],
      ],
      '    ',
    ),
    `  API writes per VM (audit log${created.settled && deleted.settled ? '' : '; WRITES DID NOT SETTLE'}):`,
    textTable([['', 'create', 'delete'], ...roles.map(writeRow), writeRow('total')], '    '),
    '  RSS (MiB; roles run from the working tree bundle; VMMs: the sum of the simulator processes):',
    textTable(
      [['', 'all Ready', 'all gone'], ...(['provider', 'controller', 'vmms'] as const).map((r) => [r, String(created.rssMiB[r]), String(deleted.rssMiB[r])])],
      '    ',
    ),
  ].join('\n');
  return { table, result };
}

function virtualMachine(env: Env, name: string, address: string): Obj {
  return {
    apiVersion: CORE,
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      classRef: { name: env.world.vmClass.metadata.name },
      imageRef: { name: env.world.vmImage.metadata.name },
      networkOverrides: [{ name: 'eth0', static: { address, prefix: 16 } }],
    },
  };
}

async function list(api: KubeApi, apiVersion: string, kind: string): Promise<Obj[]> {
  return (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion, kind, metadata: { namespace: NS } }))).items;
}

function isReady(obj: Obj | undefined): boolean {
  return ((obj?.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === ConditionType.Ready && c.status === 'True');
}

function memory(env: Env): { controller: number; provider: number; vmms: number } {
  const vmms = processesMentioning(env.host.config.stateRoot).reduce((sum, pid) => sum + processMemory(pid).rssMiB, 0);
  return { controller: processMemory(env.controller.child.pid).rssMiB, provider: processMemory(env.provider.child.pid).rssMiB, vmms: Math.round(vmms) };
}
