// The banlieue CLI as a user runs it: this tree's bundle in a process of its own, with its
// exit code and what it wrote.
import { spawn } from 'node:child_process';
import { inject } from 'vitest';
import { banlieueCommand } from './bundles.js';

export interface CliProcessRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
}

/** `banlieue <args>` run to its end. */
export async function runBanlieue(args: readonly string[]): Promise<CliProcessRun> {
  const [node, command] = await banlieueCommand(args);
  const child = spawn(node, command, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, out, err };
}

/** `banlieue vm <args> -n <ns>` against the suite's API server, as its admin. */
export function banlieueVm(ns: string, ...args: string[]): Promise<CliProcessRun> {
  return runBanlieue(['vm', ...args, '-n', ns, '--kubeconfig', inject('kubeconfig')]);
}
