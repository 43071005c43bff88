// The delayed-clone case of `make bench`: vcsim runs each clone task
// for 20 s, as a real vCenter takes tens of seconds (`-method-delay
// CloneVm:20000`: the task, not the CloneVM_Task call; `LockHandoff:0` lets
// others read the template meanwhile), and the provider reconciles 10 machines
// at once. One VM alone first, then N at once: since a clone is started and
// picked up on later passes rather than awaited in a worker, N take about as
// long as one. While the N clones run, a Ready VM is powered off: how long
// until vCenter, its VSphereMachine and its VirtualMachine say so. Set-up and
// steps are the vsphere case's; it reports and asserts nothing about speed.
import { setTimeout as delay } from 'node:timers/promises';
import type { Obj } from '../support/fixtures.js';
import { uuidOf } from '../support/vsphere/world.js';
import type { WriteCounts } from '../support/audit-writes.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { textTable } from './text-table.js';
import {
  CLUSTERS,
  CORE,
  DATACENTERS,
  envInt,
  INFRA,
  list,
  memoryOf,
  NS,
  percentiles,
  PREFIX,
  PROVIDER_FLAGS,
  provision,
  round,
  seconds,
  setUp,
  tail,
  virtualMachine,
  type Env,
  type Memory,
  type Provisioned,
} from './vsphere.js';

/** Workers of the provider's machine controller (its default, written out). */
const MACHINE_CONCURRENCY = 10;
const FLAGS = [...PROVIDER_FLAGS, '--machine-concurrency', String(MACHINE_CONCURRENCY)];
/** Named like the others so that provision() finds its clone in vcsim. */
const SOLO = `${PREFIX}solo`;
/** The resolution of the power-off times. */
const POWER_POLL_MS = 100;
/** The provider's machine queue: its controller's name, the `name` label of the workqueue_* series. */
const MACHINE_QUEUE = 'vspheremachine';

/** The machine queue's workqueue_* histograms, summed since the provider started. */
interface QueueTotals {
  readonly passes: number;
  readonly workSeconds: number;
  readonly waits: number;
  readonly waitSeconds: number;
}

interface PowerOff {
  /** Machines of the N with status.taskRef (a clone in flight) when the power-off was asked, and when the VirtualMachine showed it. */
  readonly inFlightAsked: number;
  readonly inFlightObserved: number;
  /** From the spec write to vCenter reporting poweredOff, to the VSphereMachine and to the VirtualMachine showing observedPowerState PoweredOff. */
  readonly vcenterMs: number;
  readonly machineMs: number;
  readonly virtualMachineMs: number;
}

export const vsphereDelayedCloneBench: BenchCase = {
  name: 'vsphere-delayed-clone',
  async run(teardown, say) {
    const n = envInt('BENCH_VMS', 50);
    const cloneMs = envInt('BENCH_CLONE_MS', 20_000);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 600) * 1000;
    const env = await setUp(teardown, say, { methodDelayMs: { CloneVm: cloneMs, LockHandoff: 0 }, providerFlags: FLAGS });
    try {
      const names = Array.from({ length: n }, (_, i) => `${PREFIX}${String(i).padStart(3, '0')}`);
      const startMemory = memoryOf(env);
      say(`One VirtualMachine alone (each clone task runs ${seconds(cloneMs)})`);
      const alone = await provision(env, [SOLO], timeoutMs, say);
      say(`${SOLO} Ready after ${seconds(alone.durationMs)}; now ${n} at once, and ${SOLO} powered off while their clones run`);
      const queueBefore = await machineQueue(env);
      const [created, powerOff] = await Promise.all([provision(env, names, timeoutMs, say), powerOffDuringClones(env, names, cloneMs, timeoutMs, say)]);
      const queueAfter = await machineQueue(env);
      const queue: QueueTotals = {
        passes: queueAfter.passes - queueBefore.passes,
        workSeconds: queueAfter.workSeconds - queueBefore.workSeconds,
        waits: queueAfter.waits - queueBefore.waits,
        waitSeconds: queueAfter.waitSeconds - queueBefore.waitSeconds,
      };
      return report(n, cloneMs, startMemory, alone, created, powerOff, queue);
    } catch (err) {
      say(`--- provider-vsphere log tail ---\n${tail(env.provider.logs())}\n--- controller log tail ---\n${tail(env.controller.logs())}`);
      throw err;
    }
  },
};

/**
 * Once the N clones are under way (every machine has a taskRef, or half a clone
 * time has passed), ask SOLO to power off; then time vCenter, the VSphereMachine
 * and the VirtualMachine reaching PoweredOff.
 */
async function powerOffDuringClones(env: Env, names: readonly string[], cloneMs: number, timeoutMs: number, say: (m: string) => void): Promise<PowerOff> {
  const fleet = new Set(names);
  const inFlight = async (): Promise<number> =>
    (await list(env.api, INFRA, 'VSphereMachine')).filter((m) => fleet.has(m.metadata.name) && typeof m.status?.taskRef === 'string').length;
  const solo = await env.api.get<Obj>({ apiVersion: INFRA, kind: 'VSphereMachine', metadata: { name: SOLO, namespace: NS } });
  const vm = await env.client.search.findVmByBiosUuid(uuidOf(String(solo.spec?.providerID)));
  if (!vm) throw new Error(`${SOLO} is Ready but no VM has its UUID in vcsim`);

  const start = performance.now();
  let inFlightAsked = 0;
  for (;;) {
    inFlightAsked = await inFlight();
    if (inFlightAsked === names.length || performance.now() - start > cloneMs / 2) break;
    await delay(POWER_POLL_MS);
  }
  say(`Powering ${SOLO} off with ${inFlightAsked} of ${names.length} clones in flight`);
  const asked = performance.now();
  await env.user.apply(virtualMachine(env.world, SOLO, { desiredPowerState: 'PoweredOff' }));

  let vcenterAt: number | undefined;
  let machineAt: number | undefined;
  let virtualMachineAt: number | undefined;
  let inFlightObserved = 0;
  const ref = (apiVersion: string, kind: string): Obj => ({ apiVersion, kind, metadata: { name: SOLO, namespace: NS } });
  const isOff = (obj: Obj): boolean => obj.status?.observedPowerState === 'PoweredOff';
  while (vcenterAt === undefined || machineAt === undefined || virtualMachineAt === undefined) {
    const [summary, machine, virtual] = await Promise.all([
      env.client.vms.summary(vm),
      env.api.get<Obj>(ref(INFRA, 'VSphereMachine')),
      env.api.get<Obj>(ref(CORE, 'VirtualMachine')),
    ]);
    const now = performance.now();
    if (summary.powerState === 'poweredOff') vcenterAt ??= now;
    if (isOff(machine)) machineAt ??= now;
    if (isOff(virtual) && virtualMachineAt === undefined) {
      virtualMachineAt = now;
      inFlightObserved = await inFlight();
    }
    if (now - asked > timeoutMs)
      throw new Error(
        `${SOLO} not shown PoweredOff after ${seconds(timeoutMs)} (vCenter ${vcenterAt !== undefined}, VSphereMachine ${machineAt !== undefined}, VirtualMachine ${virtualMachineAt !== undefined})`,
      );
    await delay(POWER_POLL_MS);
  }
  say(`${SOLO} PoweredOff on its VirtualMachine after ${seconds(virtualMachineAt - asked)}, ${inFlightObserved} clones still in flight`);
  return { inFlightAsked, inFlightObserved, vcenterMs: vcenterAt - asked, machineMs: machineAt - asked, virtualMachineMs: virtualMachineAt - asked };
}

/** Where the provider's machine passes spend their time: in the queue, or at work. */
async function machineQueue(env: Env): Promise<QueueTotals> {
  const text = await (await fetch(`http://127.0.0.1:${env.provider.metricsPort}/metrics`)).text();
  const value = (series: string): number => Number(new RegExp(`^${series}\\{name="${MACHINE_QUEUE}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    passes: value('workqueue_work_duration_seconds_count'),
    workSeconds: value('workqueue_work_duration_seconds_sum'),
    waits: value('workqueue_queue_duration_seconds_count'),
    waitSeconds: value('workqueue_queue_duration_seconds_sum'),
  };
}

function report(n: number, cloneMs: number, startMemory: Memory, alone: Provisioned, created: Provisioned, off: PowerOff, queue: QueueTotals): BenchReport {
  const perVm = (step: 'machineAt' | 'providerIdAt' | 'clonedAt' | 'readyAt'): { p50: number; p95: number } =>
    percentiles([...created.progress.values()].map((p) => (p[step] ?? NaN) - p.createdAt));
  const perVmWrites = (w: WriteCounts): Record<string, number> => ({
    ...Object.fromEntries(Object.entries(w).map(([role, r]) => [role, round(r.total / n)])),
    total: round(Object.values(w).reduce((sum, r) => sum + r.total, 0) / n),
  });
  const ratio = Math.round((created.durationMs / alone.durationMs) * 100) / 100;
  const result = {
    vms: n,
    vcsim: { datacenters: DATACENTERS, clusters: CLUSTERS, methodDelay: `CloneVm:${cloneMs},LockHandoff:0` },
    providerFlags: FLAGS.slice(3).join(' '),
    oneVmReadyMs: Math.round(alone.durationMs),
    timeToAllReadyMs: Math.round(created.durationMs),
    allReadyOverOneVm: ratio,
    perVmMachineMs: perVm('machineAt'),
    perVmProviderIdMs: perVm('providerIdAt'),
    perVmClonedMs: perVm('clonedAt'),
    perVmReadyMs: perVm('readyAt'),
    powerOffDuringClones: {
      clonesInFlightAsked: off.inFlightAsked,
      clonesInFlightObserved: off.inFlightObserved,
      vcenterMs: Math.round(off.vcenterMs),
      vsphereMachineMs: Math.round(off.machineMs),
      virtualMachineMs: Math.round(off.virtualMachineMs),
    },
    // The window of the N includes the power-off's writes and calls.
    apiWritesPerVm: perVmWrites(created.writes),
    writesSettled: created.settled,
    vcenterCallsPerVm: round(created.vcenter.calls / n),
    vcenterLogins: created.vcenter.logins,
    vcenterCallsByMethod: created.vcenter.byMethod,
    machineQueue: {
      passes: queue.passes,
      meanPassMs: Math.round((queue.workSeconds / Math.max(1, queue.passes)) * 1000),
      meanQueueWaitMs: Math.round((queue.waitSeconds / Math.max(1, queue.waits)) * 1000),
    },
    rssMiB: {
      'provider-vsphere': { start: startMemory.provider.rssMiB, allReady: created.memory.provider.rssMiB, peak: created.memory.provider.peakMiB },
      controller: { start: startMemory.controller.rssMiB, allReady: created.memory.controller.rssMiB, peak: created.memory.controller.peakMiB },
    },
    node: process.version,
  };

  const step = (label: string, p: { p50: number; p95: number }): string[] => [label, seconds(p.p50), seconds(p.p95)];
  const table = [
    `vsphere-delayed-clone: each clone task ${seconds(cloneMs)} (vcsim -method-delay ${result.vcsim.methodDelay}), ${DATACENTERS} datacenters × ${CLUSTERS} clusters, provider ${result.providerFlags}`,
    textTable([
      ['one VM alone: create → Ready', seconds(alone.durationMs)],
      [`${n} at once: create → all Ready`, seconds(created.durationMs)],
      [`${n} at once / one alone`, `${ratio.toFixed(2)}×`],
    ]),
    `  power-off of the Ready VM, asked with ${off.inFlightAsked} of ${n} clones in flight (taskRef set); from the spec write:`,
    textTable(
      [
        ['vCenter poweredOff', seconds(off.vcenterMs)],
        ['VSphereMachine observedPowerState PoweredOff', seconds(off.machineMs)],
        ['VirtualMachine observedPowerState PoweredOff', seconds(off.virtualMachineMs)],
        ['clones still in flight then', String(off.inFlightObserved)],
      ],
      '    ',
    ),
    `  per VM of the ${n}, from its create:`,
    textTable(
      [
        ['', 'p50', 'p95'],
        step('VSphereMachine created', result.perVmMachineMs),
        step('providerID set', result.perVmProviderIdMs),
        step('clone seen in vcsim', result.perVmClonedMs),
        step('Ready', result.perVmReadyMs),
      ],
      '    ',
    ),
    `  while the ${n} were created (with the power-off):`,
    textTable(
      [
        [
          'API writes per VM',
          `${Object.entries(result.apiWritesPerVm)
            .map(([role, w]) => `${role} ${w}`)
            .join(', ')}${created.settled ? '' : '; WRITES DID NOT SETTLE'}`,
        ],
        ['vCenter calls per VM', String(result.vcenterCallsPerVm)],
        ['vCenter Logins', String(result.vcenterLogins)],
        [`machine passes (queue ${MACHINE_QUEUE})`, `${queue.passes}, ${round(queue.passes / n)} per VM`],
        ['mean pass (workqueue_work_duration)', `${result.machineQueue.meanPassMs} ms`],
        ['mean wait in queue (workqueue_queue_duration)', `${result.machineQueue.meanQueueWaitMs} ms`],
        [
          'RSS provider-vsphere (MiB)',
          `${result.rssMiB['provider-vsphere'].start} → ${result.rssMiB['provider-vsphere'].allReady}, peak ${result.rssMiB['provider-vsphere'].peak}`,
        ],
        ['RSS controller (MiB)', `${result.rssMiB.controller.start} → ${result.rssMiB.controller.allReady}, peak ${result.rssMiB.controller.peak}`],
      ],
      '    ',
    ),
  ].join('\n');
  return { table, result };
}
