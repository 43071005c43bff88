// The banlieue CLI run in this process (a unit test starts no process), with
// what it writes caught.
import { vi } from 'vitest';
import { main as banlieue } from '../../controller/cli/main.js';

export interface CliRun {
  readonly rc: number;
  readonly out: string;
  readonly err: string;
}

/** `banlieue <args>`: its exit code and what it wrote to stdout and stderr. */
export async function runCli(args: readonly string[]): Promise<CliRun> {
  let out = '';
  let err = '';
  const catching =
    (into: (text: string) => void) =>
    (chunk: string | Uint8Array): boolean => {
      into(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(catching((t) => (out += t)));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(catching((t) => (err += t)));
  try {
    const rc = await banlieue(['node', 'banlieue', ...args]);
    return { rc, out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}
