// A role that cannot do its job says why and exits, instead of retrying
// forever: here a controller whose Lease namespace does not exist.
import { spawn } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { roleCommand } from '../support/controller-process.js';

describe('a role that cannot start', () => {
  it('exits at once, naming the Lease namespace that does not exist', async () => {
    const [node, args] = await roleCommand(['controller', '--kubeconfig', inject('kubeconfig'), '--leader-election-namespace', 'no-such-namespace-here']);
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).not.toBe(0);
    expect(out).toContain('namespace no-such-namespace-here does not exist: the Lease banlieue-controller cannot be made there');
  }, 120_000);
});
