// The scale cases of `make bench` on libvirt: a fleet of VirtualMachines over
// several test-driver hosts (a private libvirtd each, one Provider each, all in
// one namespace), through a real kube-apiserver with `banlieue controller` and
// one `banlieue provider libvirt` serving every Provider, at their default periods.
//
// - libvirt-scale (BENCH_SCALE_VMS, default 1000, over BENCH_SCALE_HOSTS, default 11):
//   time to all Ready and p50/p95 per VM, API writes and libvirt calls per VM,
//   CPU seconds and peak RSS per role;
// - libvirt-cost-per-vm (BENCH_COST_VMS, default "100,1000"): the same at each
//   size on a fresh control plane, and the cost per VM side by side;
// - libvirt-idle (BENCH_IDLE_VMS, default 1000; BENCH_IDLE_S, default 600): once
//   every VM is Ready and the writes have settled, a window in which nothing
//   changes: banlieue's API writes in it and libvirt calls per VM per minute.
//
// Figures only: nothing here asserts on speed.
import { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { auditOffset, countWrites, untilWritesSettle, type WriteCounts } from '../support/audit-writes.js';
import { backendCalls, callsSince, totalCalls } from '../support/backend-calls.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { controllerArgs, providerRoleArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { envInt, percentiles, round, seconds, stopRole, tail } from './bench-stats.js';
import { createFleetAndAwaitUp, fleetNames, isReady, startTestDriverHost, upTimesMs } from './libvirt-fleet.js';
import { cpuSeconds } from './process-cpu.js';
import { processMemory } from './process-memory.js';
import { Teardown } from './teardown.js';
import { textTable } from './text-table.js';

const NS = 'bench-scale';
const PREFIX = 'scale-';
const QUIET_MS = 5_000;
/**
 * A test-driver pool is 100 GiB whatever its XML says, and each machine takes a 1 GiB OS disk and a
 * seed volume there: 99 machines per host, so 1,000 take 11 hosts.
 */
const HOSTS = 11;
/** The provider's own reading of each host at its default period is what an idle window measures. */
const DEFAULT_REDISCOVER_S = 300;

type Role = 'controller' | 'provider';
const ROLES: readonly Role[] = ['controller', 'provider'];

interface ScaleOptions {
  readonly vms: number;
  readonly hosts: number;
  readonly timeoutMs: number;
  /** A window after all Ready in which nothing changes. @default none */
  readonly idleMs?: number;
}

interface Window {
  readonly durationMs: number;
  readonly writes: WriteCounts;
  readonly libvirtCalls: Record<string, number>;
  readonly cpuSeconds: Record<Role, number>;
}

interface ScaleRun {
  readonly vms: number;
  readonly hosts: number;
  readonly toReady: Window;
  readonly writesSettled: boolean;
  readonly perVmReadyMs: { p50: number; p95: number };
  readonly peakRssMiB: Record<Role, number>;
  readonly idle?: Window;
}

export const libvirtScaleBench: BenchCase = {
  name: 'libvirt-scale',
  async run(teardown, say) {
    const run = await runScale(teardown, say, scaleOptions('BENCH_SCALE_VMS', 1000));
    return { table: [`libvirt-scale: ${run.vms} VirtualMachines over ${run.hosts} test-driver hosts`, scaleTable([run])].join('\n'), result: summary(run) };
  },
};

export const libvirtCostPerVmBench: BenchCase = {
  name: 'libvirt-cost-per-vm',
  async run(teardown, say) {
    const sizes = envSizes('BENCH_COST_VMS', [100, 1000]);
    const runs: ScaleRun[] = [];
    for (const vms of sizes) {
      // Each size on a fresh control plane and fresh hosts, stopped before the next starts.
      const own = new Teardown();
      teardown.defer(`the ${vms}-VM run`, () => own.run());
      try {
        runs.push(await runScale(own, say, fleetOptions(vms)));
      } finally {
        await own.run();
      }
    }
    return {
      table: [
        `libvirt-cost-per-vm: ${sizes.join(' and ')} VirtualMachines over ${envInt('BENCH_SCALE_HOSTS', HOSTS)} test-driver hosts`,
        scaleTable(runs),
        '',
        '  cost per VM',
        costTable(runs),
      ].join('\n'),
      result: { runs: runs.map(summary), node: process.version },
    };
  },
};

export const libvirtIdleBench: BenchCase = {
  name: 'libvirt-idle',
  async run(teardown, say) {
    const idleMs = envInt('BENCH_IDLE_S', 600) * 1000;
    const run = await runScale(teardown, say, { ...scaleOptions('BENCH_IDLE_VMS', 1000), idleMs });
    return { table: [idleTable(run), '', '  before the window', scaleTable([run])].join('\n'), result: summary(run) };
  },
};

const scaleOptions = (vmsVariable: string, vms: number): ScaleOptions => fleetOptions(envInt(vmsVariable, vms));

function fleetOptions(vms: number): ScaleOptions {
  return { vms, hosts: envInt('BENCH_SCALE_HOSTS', HOSTS), timeoutMs: envInt('BENCH_TIMEOUT_S', 3600) * 1000 };
}

/** A comma-separated list of sizes, e.g. `100,1000`. */
function envSizes(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const sizes = raw.split(',').map(Number);
  if (!sizes.every((n) => Number.isInteger(n) && n > 0)) throw new Error(`${name} must list positive integers, e.g. 100,1000; got "${raw}"`);
  return sizes;
}

async function runScale(teardown: Teardown, say: (m: string) => void, options: ScaleOptions): Promise<ScaleRun> {
  const { vms, hosts: hostCount } = options;
  say(`${vms} VMs over ${hostCount} hosts: starting kube-apiserver, etcd and kube-controller-manager`);
  const cp = await ControlPlane.start(await buildTools());
  teardown.defer('control plane', () => cp.stop());
  await applyCrdsFromDist(cp);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  // Not `banlieue/…`: the bench's own writes are not counted as banlieue's.
  const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
  const user = new ServerSideApply(api, 'banlieue-bench');
  say(`Starting ${hostCount} libvirtd test-driver hosts`);
  const hosts = await Promise.all(Array.from({ length: hostCount }, (_, i) => startTestDriverHost(teardown, NS, `host-${String(i).padStart(2, '0')}`)));
  const [first] = hosts;
  if (!first) throw new Error('BENCH_SCALE_HOSTS must be at least 1');
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const obj of [first.world.vmClass, first.world.vmImage, ...hosts.flatMap((h) => [h.world.secret, h.world.provider])]) await user.apply(obj);

  say('Starting banlieue controller and banlieue provider libvirt');
  const roles = await startRoles(cp.kubeconfigPath, teardown);
  try {
    await waitFor(
      `${hostCount} Providers Ready`,
      async () => (await Promise.all(hosts.map(async (h) => isReady(await api.get<Obj>(h.world.provider))))).every(Boolean),
      300_000,
    );
    const names = fleetNames(PREFIX, vms);
    const begin = await mark(cp, roles);
    const times = await createFleetAndAwaitUp({
      api,
      user,
      ns: NS,
      names,
      vmClass: first.world.vmClass.metadata.name,
      vmImage: first.world.vmImage.metadata.name,
      label: `${vms} VMs`,
      timeoutMs: options.timeoutMs,
      say,
    });
    const readyAt = performance.now();
    say(`all ${vms} Ready after ${seconds(readyAt - begin.at)}; waiting for banlieue's writes to settle`);
    const writesSettled = await untilWritesSettle(cp.auditLogPath, begin.offset, QUIET_MS, 120_000);
    const toReady = { ...(await since(cp, roles, begin)), durationMs: readyAt - begin.at };
    const run: ScaleRun = {
      vms,
      hosts: hostCount,
      toReady,
      writesSettled,
      perVmReadyMs: percentiles(upTimesMs(times, names)),
      peakRssMiB: { controller: processMemory(roles.controller.child.pid).peakMiB, provider: processMemory(roles.provider.child.pid).peakMiB },
    };
    if (options.idleMs === undefined) return run;
    say(`idle window of ${seconds(options.idleMs)} with ${vms} VMs Ready`);
    const idleBegin = await mark(cp, roles);
    await delay(options.idleMs);
    return { ...run, idle: await since(cp, roles, idleBegin) };
  } catch (err) {
    say(`--- provider-libvirt log tail ---\n${tail(roles.provider.logs())}\n--- controller log tail ---\n${tail(roles.controller.logs())}`);
    throw err;
  }
}

async function startRoles(kubeconfig: string, teardown: Teardown): Promise<Record<Role, RoleProcess>> {
  const controller = await startRole(controllerArgs(kubeconfig, NS));
  teardown.defer('controller', () => stopRole(controller));
  const provider = await startRole(providerRoleArgs('libvirt', kubeconfig, NS, DEFAULT_REDISCOVER_S));
  teardown.defer('provider', () => stopRole(provider));
  return { controller, provider };
}

interface Mark {
  readonly at: number;
  readonly offset: number;
  readonly calls: Record<string, number>;
  readonly cpu: Record<Role, number>;
}

/** Where a window begins: the clock, the audit log's end, the provider's calls and each role's CPU time. */
async function mark(cp: ControlPlane, roles: Record<Role, RoleProcess>): Promise<Mark> {
  return { at: performance.now(), offset: auditOffset(cp.auditLogPath), calls: await backendCalls(roles.provider), cpu: cpuOf(roles) };
}

/** What happened since `from`, until now. */
async function since(cp: ControlPlane, roles: Record<Role, RoleProcess>, from: Mark): Promise<Window> {
  const cpu = cpuOf(roles);
  return {
    durationMs: performance.now() - from.at,
    writes: countWrites(cp.auditLogPath, from.offset),
    libvirtCalls: callsSince(from.calls, await backendCalls(roles.provider)),
    cpuSeconds: { controller: round(cpu.controller - from.cpu.controller), provider: round(cpu.provider - from.cpu.provider) },
  };
}

const cpuOf = (roles: Record<Role, RoleProcess>): Record<Role, number> => ({
  controller: cpuSeconds(roles.controller.child.pid),
  provider: cpuSeconds(roles.provider.child.pid),
});

/** banlieue's writes in a window by role (`controller`, `provider-libvirt`). */
const writesOf = (w: WriteCounts, role: Role): number =>
  Object.entries(w)
    .filter(([name]) => name === role || name.startsWith(`${role}-`))
    .reduce((sum, [, r]) => sum + r.total, 0);
const allWrites = (w: WriteCounts): number => Object.values(w).reduce((sum, r) => sum + r.total, 0);
const perVm = (x: number, run: ScaleRun): number => round(x / run.vms);
const perVmPrecise = (x: number, run: ScaleRun): number => Math.round((x / run.vms) * 1000) / 1000;

function scaleTable(runs: readonly ScaleRun[]): string {
  return textTable([
    [
      'VMs',
      'hosts',
      'all Ready',
      'p50',
      'p95',
      'API writes/VM (controller, provider)',
      'libvirt calls/VM',
      'CPU s (controller, provider)',
      'peak RSS MiB (controller, provider)',
    ],
    ...runs.map((r) => [
      String(r.vms),
      String(r.hosts),
      seconds(r.toReady.durationMs),
      seconds(r.perVmReadyMs.p50),
      seconds(r.perVmReadyMs.p95),
      `${perVm(writesOf(r.toReady.writes, 'controller'), r)}, ${perVm(writesOf(r.toReady.writes, 'provider'), r)}${r.writesSettled ? '' : ' (DID NOT SETTLE)'}`,
      String(perVm(totalCalls(r.toReady.libvirtCalls), r)),
      `${r.toReady.cpuSeconds.controller}, ${r.toReady.cpuSeconds.provider}`,
      `${r.peakRssMiB.controller}, ${r.peakRssMiB.provider}`,
    ]),
  ]);
}

/** Writes, backend calls, CPU seconds and time per VM at each size, and the largest size's over the smallest's. */
function costTable(runs: readonly ScaleRun[]): string {
  const figures = (r: ScaleRun): number[] => [
    perVmPrecise(allWrites(r.toReady.writes), r),
    perVmPrecise(totalCalls(r.toReady.libvirtCalls), r),
    perVmPrecise(
      ROLES.reduce((sum, role) => sum + r.toReady.cpuSeconds[role], 0),
      r,
    ),
    perVmPrecise(r.toReady.durationMs / 1000, r),
  ];
  const smallest = runs[0];
  const largest = runs[runs.length - 1];
  const ratioRow =
    smallest && largest && runs.length > 1
      ? [[`ratio ${largest.vms}/${smallest.vms}`, ...figures(largest).map((x, i) => `${(x / (figures(smallest)[i] ?? NaN)).toFixed(2)}×`)]]
      : [];
  return textTable([
    ['N', 'API writes/VM', 'libvirt calls/VM', 'CPU s/VM (both roles)', 's to all Ready/VM'],
    ...runs.map((r) => [String(r.vms), ...figures(r).map(String)]),
    ...ratioRow,
  ]);
}

function idleTable(run: ScaleRun): string {
  const idle = run.idle;
  if (!idle) throw new Error('the run had no idle window');
  const minutes = idle.durationMs / 60_000;
  const byResource = Object.entries(idle.writes).flatMap(([role, w]) => Object.entries(w.byResource).map(([resource, n]) => `${role} ${resource} ${n}`));
  const byMethod = Object.entries(idle.libvirtCalls).map(([method, n]) => `${method} ${n}`);
  return [
    `libvirt-idle: ${run.vms} VirtualMachines Ready over ${run.hosts} test-driver hosts, then ${seconds(idle.durationMs)} with nothing changing`,
    textTable([
      ['window', 'API writes', 'libvirt calls', 'libvirt calls/VM/min', 'CPU s (controller, provider)'],
      [
        seconds(idle.durationMs),
        String(allWrites(idle.writes)),
        String(totalCalls(idle.libvirtCalls)),
        String(Math.round((totalCalls(idle.libvirtCalls) / run.vms / minutes) * 1000) / 1000),
        `${idle.cpuSeconds.controller}, ${idle.cpuSeconds.provider}`,
      ],
    ]),
    `  writes by role and resource: ${byResource.join(', ') || 'none'}`,
    `  libvirt calls by procedure: ${byMethod.join(', ') || 'none'}`,
  ].join('\n');
}

function summary(run: ScaleRun): BenchReport['result'] {
  return {
    vms: run.vms,
    hosts: run.hosts,
    timeToAllReadyMs: Math.round(run.toReady.durationMs),
    perVmReadyMs: run.perVmReadyMs,
    apiWrites: run.toReady.writes,
    writesSettled: run.writesSettled,
    libvirtCalls: run.toReady.libvirtCalls,
    cpuSeconds: run.toReady.cpuSeconds,
    peakRssMiB: run.peakRssMiB,
    ...(run.idle
      ? {
          idle: {
            durationMs: Math.round(run.idle.durationMs),
            apiWrites: run.idle.writes,
            libvirtCalls: run.idle.libvirtCalls,
            cpuSeconds: run.idle.cpuSeconds,
          },
        }
      : {}),
    node: process.version,
  };
}
