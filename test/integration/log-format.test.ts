// A role's log as its reader gets it: one line of text per record on a
// terminal (here a pseudo-terminal made by script(1)), JSON records in a pipe
// (a pod's log), or what --log-format says.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { controllerArgs, roleCommand } from '../support/controller-process.js';
import { createNamespace } from '../support/kube.js';

const READY = 'Serving health and metrics';

/** The controller's output until it says it serves, then it is stopped; under a pseudo-terminal when `tty`. */
async function firstLines(ns: string, tty: boolean, extra: readonly string[] = []): Promise<string> {
  const [node, args] = await roleCommand(controllerArgs(inject('kubeconfig'), ns, extra));
  const quoted = [node, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = tty
    ? spawn('script', ['-qefc', quoted, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.includes(READY)) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('close', () => (out.includes(READY) ? resolve(out) : reject(new Error(`the controller stopped before serving:\n${out}`))));
  });
}

describe('log format', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  beforeAll(async () => {
    ns = await createNamespace('log-format');
  });
  afterAll(async () => ns.remove());

  it('is text on a terminal: one line per record, level and message first', async () => {
    const out = await firstLines(ns.name, true);
    const line = out.split(/\r?\n/).find((l) => l.includes(READY)) ?? '';
    expect(line.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Serving health and metrics \{.*"role":"controller"/);
    expect(out).not.toMatch(/^\{"level"/m);
  }, 120_000);

  it('is JSON in a pipe, and text there when asked', async () => {
    const json = (await firstLines(ns.name, false)).split('\n').find((l) => l.includes(READY)) ?? '';
    expect(JSON.parse(json)).toMatchObject({ level: 'info', role: 'controller', msg: READY });
    expect(await firstLines(ns.name, false, ['--log-format', 'text'])).toMatch(/INFO: Serving health and metrics/);
  }, 120_000);
});
