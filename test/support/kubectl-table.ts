// `kubectl get` table output as a user reads it: the printer columns of one object's row.
import { expect } from 'vitest';
import { clusterAdmin, kubectlAs } from './tenant.js';

/** The first row of `kubectl get <args> -n <ns>` by column header (a cluster admin's view); kubectl must print no error. */
export async function kubectlRow(ns: string, ...args: string[]): Promise<Record<string, string>> {
  const run = await kubectlAs(clusterAdmin, ['get', ...args, '-n', ns]);
  expect(run.stderr).toBe('');
  const [header = '', row = ''] = run.stdout.trimEnd().split('\n');
  // Columns start where their header does; each value runs to the next header.
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index ?? 0);
  return Object.fromEntries(starts.map((at, i) => [header.slice(at).split(/\s/)[0] ?? '', row.slice(at, starts[i + 1]).trim()]));
}
