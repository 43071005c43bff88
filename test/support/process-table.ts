// The processes of this machine as /proc shows them, for tests that check a
// program leaves none of its processes behind: every descendant seen while it
// ran (even one later orphaned and re-parented) and every member of a process
// group. Linux only, like the rest of the test peers.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** Process group id. */
  readonly pgrp: number;
  /** R, S, D, Z (zombie: exited, not yet reaped), ... */
  readonly state: string;
  /** Clock ticks after boot: with the pid, names one process even after its pid is reused. */
  readonly startTime: number;
  /** CPU time used so far, user plus system (utime + stime), in clock ticks (USER_HZ, 100 a second on Linux). */
  readonly cpuTicks: number;
  readonly comm: string;
}

/** One process from /proc/<pid>/stat; undefined once it is gone. */
export function readProcess(pid: number): ProcessEntry | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime ..."
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    pid,
    comm: stat.slice(stat.indexOf('(') + 1, close),
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    startTime: Number(fields[19]),
    cpuTicks: Number(fields[11]) + Number(fields[12]),
  };
}

/** Every process now. */
export function processTable(): ProcessEntry[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      const entry = readProcess(Number(name));
      return entry ? [entry] : [];
    });
}

/** Still running: present with the same start time, and not a zombie. */
export function isRunning(p: Pick<ProcessEntry, 'pid' | 'startTime'>): boolean {
  const now = readProcess(p.pid);
  return now !== undefined && now.startTime === p.startTime && now.state !== 'Z';
}

/**
 * Records, every `periodMs`, each process descending from `rootPid`, so that
 * a process orphaned later (re-parented away from the tree) is still known.
 */
export class DescendantWatch {
  private readonly seen = new Map<string, ProcessEntry>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly rootPid: number,
    periodMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), periodMs);
  }

  /** Takes one more look now. */
  sample(): void {
    const table = processTable();
    const children = new Map<number, ProcessEntry[]>();
    for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
    const queue = [...(children.get(this.rootPid) ?? [])];
    for (let p = queue.shift(); p; p = queue.shift()) {
      this.seen.set(`${p.pid}:${p.startTime}`, p);
      queue.push(...(children.get(p.pid) ?? []));
    }
  }

  /** Every descendant seen so far. */
  descendants(): ProcessEntry[] {
    return [...this.seen.values()];
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
