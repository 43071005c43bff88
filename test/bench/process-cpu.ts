// CPU time a process has used, from /proc/<pid>/stat (Linux): user plus system,
// of the process itself (its threads included), in seconds.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** Clock ticks per second, the unit of /proc/<pid>/stat's times (100 on most systems). */
function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  return ticksPerSecond;
}

export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) throw new Error('process has no pid (it did not start)');
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 14th and 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}
