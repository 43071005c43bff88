// Resident memory of a process from /proc/<pid>/status (Linux): what the
// kernel charges it, not what the V8 heap reports.
import { readFileSync } from 'node:fs';

export interface ProcessMemory {
  /** VmRSS: resident now, MiB. */
  readonly rssMiB: number;
  /** VmHWM: the peak resident size since the process started, MiB. */
  readonly peakMiB: number;
}

export function processMemory(pid: number | undefined): ProcessMemory {
  if (pid === undefined) throw new Error('process has no pid (it did not start)');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (!match?.[1]) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]);
  };
  return { rssMiB: round(kib('VmRSS') / 1024), peakMiB: round(kib('VmHWM') / 1024) };
}

const round = (x: number): number => Math.round(x * 10) / 10;
