// The vSphere case of `make bench`: N VirtualMachines end to end on vcsim —
// created at once, Ready, deleted — through a real kube-apiserver, with
// `banlieue controller` and `banlieue provider vsphere` as processes. The bench
// plays VMware Tools (a guest IP) as each VM appears, as the integration test
// does. It reports time to all Ready, API writes per VM and RSS; it asserts
// nothing about speed. Its set-up and steps are shared with the other vSphere
// cases (vsphere-delayed-clone.ts).
//
// BENCH_KEEP_AUDIT=<path> keeps the kube-apiserver audit log there (copied
// before teardown), at level Request: each write with its body (requestObject),
// to see which writes a count is made of, e.g. one VM's status patches in order;
// BENCH_LOG_DIR keeps both roles' whole logs there (keepLog).
import { KubeConfig } from '@kubernetes/client-node';
import { copyFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { VmSummary } from '../../controller/backends/vsphere/client/vim-types.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { Informer, type KubeObject } from '../../controller/runtime/informer.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import { startVcsim } from '../peers/vsphere/vcsim.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { IN_TEMPLATE_DATACENTER, makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld, type VsphereWorld } from '../support/vsphere/world.js';
import { auditOffset, countWrites, untilWritesSettle, type WriteCounts } from '../support/audit-writes.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { envInt, keepLog, percentiles, round, seconds, stopRole, tail } from './bench-stats.js';
import { processMemory, type ProcessMemory } from './process-memory.js';
import { textTable } from './text-table.js';
import type { Teardown } from './teardown.js';

export const CORE = `${CORE_GROUP}/${API_VERSION}`;
export const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
export const NS = 'bench-vsphere';
const TEMPLATE = 'bench-ubuntu';
/** Every VM of a vSphere case is named so (the bench finds its clones in vcsim by it). */
export const PREFIX = 'bench-vm-';
export const DATACENTERS = 2;
export const CLUSTERS = 2;
/** Flags of the provider role: a 1 s poll so that a guest IP is seen soon after Tools reports it (default 10 s). */
export const PROVIDER_FLAGS: readonly string[] = ['--no-leader-elect', '--namespace', NS, '--poll-period', '1', '--rediscover-period', '5'];
/** How often the bench looks at vcsim for new clones (the resolution of the clone time; API steps are timed by watch). */
const POLL_MS = 250;
/** No banlieue write for this long ends a write window: several provider poll periods. */
const QUIET_MS = 5_000;

export interface Env {
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly client: VsphereClient;
  readonly world: VsphereWorld;
  readonly controller: RoleProcess;
  readonly provider: RoleProcess;
}

/** When the bench first saw each step of one VM, in performance.now() ms. */
interface VmProgress {
  createdAt: number;
  /** Its VSphereMachine exists (the controller's step). */
  machineAt?: number;
  providerIdAt?: number;
  /** The BIOS UUID its providerID names. */
  uuid?: string;
  clonedAt?: number;
  readyAt?: number;
}

/** What the bench reads of a watched VirtualMachine or VSphereMachine. */
type Watched = KubeObject & Pick<Obj, 'spec' | 'status'>;

export interface Memory {
  readonly controller: ProcessMemory;
  readonly provider: ProcessMemory;
}

interface Window {
  readonly durationMs: number;
  readonly writes: WriteCounts;
  /** False when banlieue kept writing after the phase ended (writes at idle). */
  readonly settled: boolean;
  readonly memory: Memory;
  /** vCenter SOAP calls and Logins of the provider in the phase (its banlieue_backend_calls_total). */
  readonly vcenter: VcenterCalls;
}

interface VcenterCalls {
  readonly calls: number;
  readonly logins: number;
  readonly byMethod: Readonly<Record<string, number>>;
}

/** The provider's banlieue_backend_calls_total, summed and by method. */
async function vcenterCalls(env: Env): Promise<VcenterCalls> {
  const res = await fetch(`http://127.0.0.1:${env.provider.metricsPort}/metrics`);
  const byMethod: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const match = /^banlieue_backend_calls_total\{[^}]*method="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (match?.[1] !== undefined) byMethod[match[1]] = (byMethod[match[1]] ?? 0) + Number(match[2]);
  }
  const calls = Object.values(byMethod).reduce((a, b) => a + b, 0);
  return { calls, logins: byMethod.Login ?? 0, byMethod };
}

const since = (before: VcenterCalls, after: VcenterCalls): VcenterCalls => ({
  calls: after.calls - before.calls,
  logins: after.logins - before.logins,
  byMethod: Object.fromEntries(
    Object.entries(after.byMethod)
      .map(([m, n]) => [m, n - (before.byMethod[m] ?? 0)])
      .filter(([, n]) => n !== 0),
  ),
});

export interface Provisioned extends Window {
  readonly progress: ReadonlyMap<string, VmProgress>;
}

interface Deprovisioned extends Window {
  readonly vcsimLeft: number;
}

export const vsphereBench: BenchCase = {
  name: 'vsphere',
  async run(teardown, say) {
    const n = envInt('BENCH_VMS', 50);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 600) * 1000;
    const env = await setUp(teardown, say);
    try {
      const names = Array.from({ length: n }, (_, i) => `${PREFIX}${String(i).padStart(3, '0')}`);
      const startMemory = memoryOf(env);
      const created = await provision(env, names, timeoutMs, say);
      const deleted = await deprovision(env, names, timeoutMs, say);
      return report(n, startMemory, created, deleted);
    } catch (err) {
      say(`--- provider-vsphere log tail ---\n${tail(env.provider.logs())}\n--- controller log tail ---\n${tail(env.controller.logs())}`);
      throw err;
    }
  },
};

export interface SetUpOptions {
  /** vcsim -method-delay, e.g. `{ CloneVm: 20_000, LockHandoff: 0 }`. @default none */
  readonly methodDelayMs?: Readonly<Record<string, number>>;
  /** Flags of `banlieue provider vsphere` after the subcommand and --kubeconfig. @default PROVIDER_FLAGS */
  readonly providerFlags?: readonly string[];
}

/** A control plane, vcsim with a template, the user's objects, and both roles as processes; all registered on `teardown`. */
export async function setUp(teardown: Teardown, say: (m: string) => void, options: SetUpOptions = {}): Promise<Env> {
  say('Starting kube-apiserver, etcd and kube-controller-manager');
  const keepAudit = process.env.BENCH_KEEP_AUDIT;
  const cp = await ControlPlane.start(await buildTools(), keepAudit ? { auditLevel: 'Request' } : {});
  teardown.defer('control plane', () => cp.stop());
  // Registered after the control plane, so it runs before it stops.
  if (keepAudit) teardown.defer('audit log copy', () => copyFile(cp.auditLogPath, keepAudit));
  await applyCrdsFromDist(cp);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  // Not `banlieue/…`: the bench's own writes are not counted as banlieue's.
  const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
  const user = new ServerSideApply(api, 'banlieue-bench');
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  const delays = Object.entries(options.methodDelayMs ?? {});
  say(
    `Starting vcsim (${DATACENTERS} datacenters × ${CLUSTERS} clusters${delays.length > 0 ? `, -method-delay ${delays.map(([m, ms]) => `${m}:${ms}`).join(',')}` : ''})`,
  );
  const vcsim = await startVcsim({ datacenters: DATACENTERS, clusters: CLUSTERS, ...(options.methodDelayMs ? { methodDelayMs: options.methodDelayMs } : {}) });
  teardown.defer('vcsim', () => vcsim.stop());
  const client = await vcsimClient(vcsim);
  teardown.defer('vcsim session', () => client.close());
  await makeTemplate(client, TEMPLATE);
  const world = vsphereWorld(NS, vcsim, 'bench', TEMPLATE);
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await user.apply(obj);

  say('Starting banlieue controller and banlieue provider vsphere');
  const controller = await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect', '--namespace', NS]);
  teardown.defer('controller', async () => {
    await stopRole(controller);
    keepLog('controller', controller.logs());
  });
  const provider = await startRole(['provider', 'vsphere', '--kubeconfig', cp.kubeconfigPath, ...(options.providerFlags ?? PROVIDER_FLAGS)]);
  teardown.defer('provider', async () => {
    await stopRole(provider);
    keepLog('provider-vsphere', provider.logs());
  });
  await waitFor('Provider vcsim Ready', async () => isReady(await api.get<Obj>(world.provider)), 120_000);
  return { cp, api, user, client, world, controller, provider };
}

/** Create every VM at once; play Tools for each as it appears in vcsim; wait until all are Ready. */
export async function provision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<Provisioned> {
  const from = auditOffset(env.cp.auditLogPath);
  const callsBefore = await vcenterCalls(env);
  const progress = new Map<string, VmProgress>(names.map((name) => [name, { createdAt: NaN }]));
  // The API side is watched, not polled: each step is timed when its event arrives, and the bench adds no list load.
  const watching = new AbortController();
  const vms = new Informer<Watched>(env.api, { apiVersion: CORE, kind: 'VirtualMachine', namespace: NS, log: silentLogger() });
  const machines = new Informer<Watched>(env.api, { apiVersion: INFRA, kind: 'VSphereMachine', namespace: NS, log: silentLogger() });
  vms.on('add', (vm) => seeVm(progress, vm)).on('update', (vm) => seeVm(progress, vm));
  machines.on('add', (m) => seeMachine(progress, m)).on('update', (m) => seeMachine(progress, m));
  for (const informer of [vms, machines]) void informer.run(watching.signal);
  try {
    await Promise.all([vms.waitForSync(), machines.waitForSync()]);
    const start = performance.now();
    await Promise.all(
      names.map(async (name) => {
        const p = progress.get(name) as VmProgress;
        p.createdAt = performance.now();
        await env.user.apply(virtualMachine(env.world, name));
      }),
    );
    say(`Created ${names.length} VirtualMachines in ${seconds(performance.now() - start)}`);

    const deadline = start + timeoutMs;
    const ips = new Map(names.map((name, i) => [name, `10.30.${Math.floor(i / 250)}.${(i % 250) + 1}`]));
    let lastSaid = start;
    for (;;) {
      const count = (step: keyof VmProgress): number => [...progress.values()].filter((p) => p[step] !== undefined).length;
      if (count('readyAt') === names.length) break;
      // Tools reports once, as soon as the clone exists; a lost race with the listing is retried next round.
      const waiting = [...progress.entries()].filter(([, p]) => p.uuid !== undefined && p.clonedAt === undefined);
      if (waiting.length > 0) {
        const cloned = new Set((await benchVms(env.client)).map((vm) => vm.uuid?.toLowerCase()));
        const now = performance.now();
        await Promise.all(
          waiting
            .filter(([, p]) => cloned.has(p.uuid))
            .map(async ([name, p]) => {
              if (await playTools(env.client, p.uuid ?? '', ips.get(name) ?? '')) p.clonedAt = now;
            }),
        );
      }
      const now = performance.now();
      if (now > deadline || now - lastSaid > 5_000) {
        const status = `providerID ${count('providerIdAt')}, cloned ${count('clonedAt')}, Ready ${count('readyAt')} of ${names.length}`;
        if (now > deadline) throw new Error(`after ${seconds(timeoutMs)}: ${status}`);
        say(`${seconds(now - start)}: ${status}`);
        lastSaid = now;
      }
      await delay(POLL_MS);
    }
    const durationMs = Math.max(...[...progress.values()].map((p) => p.readyAt ?? 0)) - start;
    say(`All ${names.length} Ready after ${seconds(durationMs)}; waiting for banlieue's writes to settle`);
    const memory = memoryOf(env);
    const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
    const vcenter = since(callsBefore, await vcenterCalls(env));
    return { durationMs, writes: countWrites(env.cp.auditLogPath, from), settled, memory, vcenter, progress };
  } finally {
    watching.abort();
  }
}

function seeVm(progress: ReadonlyMap<string, VmProgress>, vm: Watched): void {
  const p = progress.get(vm.metadata.name ?? '');
  if (p && isReady(vm)) p.readyAt ??= performance.now();
}

function seeMachine(progress: ReadonlyMap<string, VmProgress>, machine: Watched): void {
  const p = progress.get(machine.metadata.name ?? '');
  if (!p) return;
  const now = performance.now();
  p.machineAt ??= now;
  const providerID: unknown = machine.spec?.providerID;
  if (typeof providerID !== 'string') return;
  p.providerIdAt ??= now;
  p.uuid ??= uuidOf(providerID).toLowerCase();
}

/** Delete every VM at once; wait until the objects are gone, then check that vcsim holds none of them. */
async function deprovision(env: Env, names: readonly string[], timeoutMs: number, say: (m: string) => void): Promise<Deprovisioned> {
  const from = auditOffset(env.cp.auditLogPath);
  const callsBefore = await vcenterCalls(env);
  const start = performance.now();
  await Promise.all(names.map(async (name) => env.api.request('DELETE', await env.api.pathOf(vmRef(name)))));
  await waitFor(
    'every VirtualMachine and VSphereMachine to be gone',
    async () => (await list(env.api, CORE, 'VirtualMachine')).length + (await list(env.api, INFRA, 'VSphereMachine')).length === 0,
    timeoutMs,
  );
  const durationMs = performance.now() - start;
  say(`All ${names.length} gone after ${seconds(durationMs)}`);
  // The provider destroys the VM before it removes its finalizer, so none should be left; a leak fails the run.
  const left = await benchVms(env.client);
  if (left.length > 0) throw new Error(`${left.length} VMs left in vcsim after their VirtualMachines were deleted: ${left.map((vm) => vm.name).join(', ')}`);
  const memory = memoryOf(env);
  const settled = await untilWritesSettle(env.cp.auditLogPath, from, QUIET_MS, 60_000);
  const vcenter = since(callsBefore, await vcenterCalls(env));
  return { durationMs, writes: countWrites(env.cp.auditLogPath, from), settled, memory, vcenter, vcsimLeft: left.length };
}

function report(n: number, startMemory: Memory, created: Provisioned, deleted: Deprovisioned): BenchReport {
  const perVm = (step: 'machineAt' | 'providerIdAt' | 'clonedAt' | 'readyAt'): number[] =>
    [...created.progress.values()].map((p) => (p[step] ?? NaN) - p.createdAt);
  const ready = percentiles(perVm('readyAt'));
  const roles = [...new Set([...Object.keys(created.writes), ...Object.keys(deleted.writes)])].sort();
  const writesPerVm = (w: WriteCounts): Record<string, number> => {
    const byRole = Object.fromEntries(roles.map((role) => [role, round((w[role]?.total ?? 0) / n)]));
    return { ...byRole, total: round(Object.values(w).reduce((sum, r) => sum + r.total, 0) / n) };
  };
  const rss = (role: keyof Memory): Record<string, number> => ({
    start: startMemory[role].rssMiB,
    allReady: created.memory[role].rssMiB,
    allGone: deleted.memory[role].rssMiB,
    peak: deleted.memory[role].peakMiB,
  });
  const result = {
    vms: n,
    vcsim: { datacenters: DATACENTERS, clusters: CLUSTERS },
    providerFlags: PROVIDER_FLAGS.slice(3).join(' '),
    timeToAllReadyMs: Math.round(created.durationMs),
    perVmReadyMs: ready,
    perVmMachineMs: percentiles(perVm('machineAt')),
    perVmProviderIdMs: percentiles(perVm('providerIdAt')),
    perVmClonedMs: percentiles(perVm('clonedAt')),
    timeToAllGoneMs: Math.round(deleted.durationMs),
    vcsimVmsLeft: deleted.vcsimLeft,
    apiWritesPerVm: { create: writesPerVm(created.writes), delete: writesPerVm(deleted.writes) },
    apiWrites: { create: created.writes, delete: deleted.writes },
    writesSettled: { create: created.settled, delete: deleted.settled },
    rssMiB: { 'provider-vsphere': rss('provider'), controller: rss('controller') },
    vcenterCallsPerVm: { create: round(created.vcenter.calls / n), delete: round(deleted.vcenter.calls / n) },
    vcenterLogins: { create: created.vcenter.logins, delete: deleted.vcenter.logins },
    vcenterCallsByMethod: { create: created.vcenter.byMethod, delete: deleted.vcenter.byMethod },
    node: process.version,
  };

  const step = (label: string, p: { p50: number; p95: number }): string[] => [label, seconds(p.p50), seconds(p.p95)];
  const writeRow = (role: string): string[] => [role, ...(['create', 'delete'] as const).map((phase) => String(result.apiWritesPerVm[phase][role] ?? 0))];
  const failed = (w: WriteCounts): number => Object.values(w).reduce((sum, r) => sum + r.failed, 0);
  const memRow = (label: string, r: Record<string, number>): string[] => [label, ...['start', 'allReady', 'allGone', 'peak'].map((k) => String(r[k]))];
  const table = [
    `vsphere: ${n} VirtualMachines on vcsim (${DATACENTERS} datacenters × ${CLUSTERS} clusters), provider ${result.providerFlags}`,
    textTable([
      ['create → all Ready', seconds(created.durationMs)],
      ['delete → all gone', seconds(deleted.durationMs)],
      ['VMs left in vcsim', String(deleted.vcsimLeft)],
    ]),
    '  per VM, from its create:',
    textTable(
      [
        ['', 'p50', 'p95'],
        step('VSphereMachine made', result.perVmMachineMs),
        step('providerID set', result.perVmProviderIdMs),
        step('clone seen in vcsim', result.perVmClonedMs),
        step('Ready', ready),
      ],
      '    ',
    ),
    `  API writes per VM (audit log; failed: ${failed(created.writes)} create, ${failed(deleted.writes)} delete${created.settled && deleted.settled ? '' : '; WRITES DID NOT SETTLE'}):`,
    textTable([['', 'create', 'delete'], ...roles.map(writeRow), writeRow('total')], '    '),
    "  vCenter SOAP calls (the provider's banlieue_backend_calls_total):",
    textTable(
      [
        ['', 'create', 'delete'],
        ['calls per VM', String(result.vcenterCallsPerVm.create), String(result.vcenterCallsPerVm.delete)],
        ['Logins', String(result.vcenterLogins.create), String(result.vcenterLogins.delete)],
      ],
      '    ',
    ),
    '  RSS (MiB, /proc/<pid>/status; roles run from the working tree bundle):',
    textTable(
      [
        ['', 'start', 'all Ready', 'all gone', 'peak'],
        memRow('provider-vsphere', result.rssMiB['provider-vsphere']),
        memRow('controller', result.rssMiB.controller),
      ],
      '    ',
    ),
  ].join('\n');
  return { table, result };
}

/**
 * The VirtualMachine a user writes, in the template's datacenter; `extra` adds spec fields (e.g. desiredPowerState).
 */
export function virtualMachine(world: VsphereWorld, name: string, extra: Record<string, unknown> = {}): Obj {
  return {
    ...vmRef(name),
    spec: { classRef: { name: world.vmClass.metadata.name }, imageRef: { name: world.vmImage.metadata.name }, placement: IN_TEMPLATE_DATACENTER, ...extra },
  };
}

const vmRef = (name: string): Obj => ({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: NS } });

export async function list(api: KubeApi, apiVersion: string, kind: string): Promise<Obj[]> {
  return (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion, kind, metadata: { namespace: NS } }))).items;
}

/** The bench's VMs in vcsim: one property-collector call for the whole inventory, not one search per VM. */
async function benchVms(client: VsphereClient): Promise<VmSummary[]> {
  const vms = await client.vms.list(client.session.serviceContent.rootFolder);
  return vms.filter((vm) => !vm.template && vm.name.startsWith(PREFIX));
}

function isReady(obj: Pick<Obj, 'status'>): boolean {
  const conditions = (obj.status?.conditions ?? []) as { type: string; status: string }[];
  return conditions.some((c) => c.type === ConditionType.Ready && c.status === 'True');
}

export function memoryOf(env: Env): Memory {
  return { controller: processMemory(env.controller.child.pid), provider: processMemory(env.provider.child.pid) };
}

export { envInt, percentiles, round, seconds, tail } from './bench-stats.js';
