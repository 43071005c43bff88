// The table `make bench-capv` prints: for each N, CAPV's row, banlieue's row and
// banlieue's ratio to CAPV, each row the side's run of median time (the times of
// all its runs beside it); then where each side's time went, per Machine from
// the MachineDeployment's creation; then its vCenter calls by User-Agent and
// its busiest methods, its API writes by resource, the CPU time of the processes
// both sides share (API server, etcd, CAPI, vcsim) and the CAPI manager's writes
// in its window: what each side's pace costs the rest of the control plane.
import type { RoleWrites, WriteCounts } from '../support/audit-writes.js';
import type { CallCounts } from '../support/vsphere/vcenter-call-counter.js';
import type { BenchReport } from './bench-case.js';
import { percentiles, round, seconds } from './bench-stats.js';
import type { MachineProgress } from './capv-machines.js';
import { textTable } from './text-table.js';

export interface SideResult {
  readonly side: 'CAPV' | 'banlieue';
  readonly machines: number;
  /** Which of the side's runs at this size, from 1. */
  readonly run: number;
  /** When the MachineDeployment was created, performance.now() ms. */
  readonly startedAt: number;
  /** From the MachineDeployment's creation to the last Machine provisioned with an address. */
  readonly durationMs: number;
  readonly progress: ReadonlyMap<string, MachineProgress>;
  /** By user (the side's processes each run as one). */
  readonly writes: WriteCounts;
  readonly writesSettled: boolean;
  /** The CAPI manager's, from the MachineDeployment's creation to the last Machine provisioned. */
  readonly capiWrites?: RoleWrites;
  readonly vcenterCalls: CallCounts;
  /** Per process of the side, in the measured window. */
  readonly cpuSeconds: readonly number[];
  /** Of the processes both sides share (API server, etcd, CAPI, vcsim, the bench harness), in the same window. */
  readonly sharedCpuSeconds: Readonly<Record<string, number>>;
  /** Per process of the side, when every Machine was provisioned. */
  readonly rssMiB: readonly number[];
  readonly peakMiB: readonly number[];
}

const STEPS: readonly [keyof MachineProgress, string][] = [
  ['machineAt', 'Machine'],
  ['infraAt', 'InfraMachine'],
  ['cloneSeenAt', 'VM in vcsim'],
  ['providerIdAt', 'providerID'],
  ['infraProvisionedAt', 'infra provisioned'],
  ['doneAt', 'Machine provisioned'],
];

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);
const totalWrites = (r: SideResult): number => sum(Object.values(r.writes).map((w) => w.total));
const totalCalls = (r: SideResult): number => sum(Object.values(r.vcenterCalls).flatMap((byMethod) => Object.values(byMethod)));
const ratio = (ours: number, theirs: number): string => (theirs > 0 ? `${(ours / theirs).toFixed(2)}×` : '-');

interface Figures {
  readonly timeMs: number;
  readonly writesPerMachine: number;
  readonly callsPerMachine: number;
  readonly cpuSeconds: number;
}

function figures(r: SideResult): Figures {
  return { timeMs: r.durationMs, writesPerMachine: totalWrites(r) / r.machines, callsPerMachine: totalCalls(r) / r.machines, cpuSeconds: sum(r.cpuSeconds) };
}

/** The run of median time among a side's runs at one size (the faster of the middle two of an even number). */
function medianRun(runs: readonly SideResult[]): SideResult | undefined {
  const byTime = [...runs].sort((a, b) => a.durationMs - b.durationMs);
  return byTime[Math.floor((byTime.length - 1) / 2)];
}

function row(r: SideResult, runs: readonly SideResult[]): string[] {
  const f = figures(r);
  return [
    String(r.machines),
    r.side,
    seconds(f.timeMs),
    runs.map((x) => seconds(x.durationMs)).join(', '),
    String(round(f.writesPerMachine)),
    String(round(f.callsPerMachine)),
    String(round(f.cpuSeconds)),
    r.rssMiB.map(String).join(' + '),
    r.peakMiB.map(String).join(' + '),
  ];
}

function stepRow(r: SideResult): string[] {
  return [
    String(r.machines),
    r.side,
    ...STEPS.map(([step]) => {
      const p = percentiles([...r.progress.values()].map((m) => (m[step] ?? NaN) - r.startedAt));
      return `${seconds(p.p50)} / ${seconds(p.p95)}`;
    }),
  ];
}

/** The `top` busiest entries of a count map, `name n, …`. */
function busiest(counts: Readonly<Record<string, number>>, top: number): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, n]) => `${name} ${n}`)
    .join(', ');
}

export function capvReport(results: readonly SideResult[], about: { capv: string; providerFlags: string }): BenchReport {
  const sizes = [...new Set(results.map((r) => r.machines))];
  const runsOf = (n: number, side: SideResult['side']): SideResult[] => results.filter((r) => r.machines === n && r.side === side);
  const medians: SideResult[] = [];
  const rows: string[][] = [
    ['N', '', 'time (median)', 'runs', 'provider writes/Machine', 'vCenter calls/Machine', 'CPU s (infra)', 'RSS MiB (infra)', 'peak MiB'],
  ];
  for (const n of sizes) {
    const [capvRuns, ourRuns] = [runsOf(n, 'CAPV'), runsOf(n, 'banlieue')];
    const [capv, ours] = [medianRun(capvRuns), medianRun(ourRuns)];
    if (capv) rows.push(row(capv, capvRuns));
    if (ours) rows.push(row(ours, ourRuns));
    medians.push(...[capv, ours].filter((r): r is SideResult => r !== undefined));
    if (capv && ours) {
      const [a, b] = [figures(ours), figures(capv)];
      rows.push([
        '',
        'ratio',
        ratio(a.timeMs, b.timeMs),
        '',
        ratio(a.writesPerMachine, b.writesPerMachine),
        ratio(a.callsPerMachine, b.callsPerMachine),
        ratio(a.cpuSeconds, b.cpuSeconds),
        ratio(sum(ours.rssMiB), sum(capv.rssMiB)),
        '',
      ]);
    }
  }
  const detail = medians.flatMap((r) => [
    `    ${r.machines} ${r.side}: vCenter calls by User-Agent: ${Object.entries(r.vcenterCalls)
      .map(([agent, byMethod]) => `"${agent}" ${sum(Object.values(byMethod))} (${busiest(byMethod, 6)})`)
      .join('; ')}`,
    `    ${r.machines} ${r.side}: API writes by user${r.writesSettled ? '' : ' (WRITES DID NOT SETTLE)'}: ${Object.entries(r.writes)
      .map(([user, w]) => `${user} ${w.total}, failed ${w.failed} (${busiest(w.byResource, 6)})`)
      .join('; ')}`,
    `    ${r.machines} ${r.side}: CPU s of the shared processes in its window: ${Object.entries(r.sharedCpuSeconds)
      .map(([name, s]) => `${name} ${round(s)}`)
      .join(', ')}`,
    `    ${r.machines} ${r.side}: the CAPI manager's API writes until the last Machine was provisioned: ${
      r.capiWrites ? `${r.capiWrites.total}, failed ${r.capiWrites.failed} (${busiest(r.capiWrites.byResource, 6)})` : 'none'
    }`,
  ]);
  const table = [
    `capv: CAPV ${about.capv} and banlieue side by side, one MachineDeployment of N on vcsim through the real CAPI manager (banlieue's provider ${about.providerFlags}; CAPV's defaults)`,
    '  time: MachineDeployment created → every Machine with providerID, infrastructure provisioned and an address, in the run of median time (runs: every run); CPU and RSS: the infra side only (banlieue: controller + provider)',
    textTable(rows),
    "  per Machine, from the MachineDeployment's creation (p50 / p95), in the median runs:",
    textTable([['N', '', ...STEPS.map(([, label]) => label)], ...medians.map(stepRow)], '    '),
    ...detail,
  ].join('\n');
  const result = {
    capv: about.capv,
    providerFlags: about.providerFlags,
    runs: results.map((r) => ({
      side: r.side,
      machines: r.machines,
      run: r.run,
      median: medians.includes(r),
      ...figures(r),
      rssMiB: r.rssMiB,
      peakMiB: r.peakMiB,
      writesSettled: r.writesSettled,
      steps: Object.fromEntries(STEPS.map(([step]) => [step, percentiles([...r.progress.values()].map((m) => (m[step] ?? NaN) - r.startedAt))])),
      vcenterCalls: r.vcenterCalls,
      writes: r.writes,
      capiWrites: r.capiWrites,
      sharedCpuSeconds: r.sharedCpuSeconds,
    })),
  };
  return { table, result };
}
