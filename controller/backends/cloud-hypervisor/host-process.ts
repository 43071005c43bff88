// Host processes as /proc shows them (the provider runs on a Linux KVM host). A pid
// alone proves nothing: a VMM that exited may linger as a zombie (`kill -0` succeeds on
// it until its parent reaps it, and after a provider restart the parent is init), and a
// pid may be reused. So a process is taken for a machine's VMM only when it is not a
// zombie and its command line names that machine's API socket.
import { readFile } from 'node:fs/promises';

export interface HostProcess {
  readonly pid: number;
  /** The state letter of /proc/<pid>/stat: R, S, D, Z (zombie), X (dead)… */
  readonly state: string;
  readonly argv: readonly string[];
}

/** The process, or undefined when there is no such pid. */
export async function readHostProcess(pid: number): Promise<HostProcess | undefined> {
  try {
    const [stat, cmdline] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/cmdline`, 'utf8')]);
    // `pid (comm) S …`: comm may hold spaces and parentheses, so read after the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return { pid, state, argv: cmdline.split('\0').filter((arg) => arg !== '') };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return undefined;
    throw error;
  }
}

/** True when `process` runs (is not a zombie or dead). */
export function isRunning(process: HostProcess | undefined): process is HostProcess {
  return process !== undefined && process.state !== 'Z' && process.state !== 'X';
}

/** The running process `pid` if it serves `apiSocket` (`--api-socket path=<apiSocket>`), else undefined. */
export async function findVmmProcess(pid: number | undefined, apiSocket: string): Promise<HostProcess | undefined> {
  if (pid === undefined) return undefined;
  const found = await readHostProcess(pid);
  if (!isRunning(found)) return undefined;
  const socketArg = `path=${apiSocket}`;
  return found.argv.some((arg) => arg === socketArg || arg.split(',').includes(socketArg)) ? found : undefined;
}
