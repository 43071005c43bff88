// `make demo` stopped at any point leaves no process behind: the demo
// (test/support/demo.ts) is interrupted during start-up and once it is up, by
// each way a demo ends early, and afterwards no process it started runs: none
// of those seen descending from it while it ran (even one re-parented since),
// and none in its process group.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { DescendantWatch, isRunning, processTable, type ProcessEntry } from '../support/process-table.js';
import { waitFor } from '../support/wait.js';

/** Start-up runs the control plane first: etcd, then kube-apiserver. */
const DURING_START_UP = (d: RunningDemo): boolean => d.running('kube-apiserver') && !d.output().includes('== Control plane ready');
/** Up: the control plane, the controller, vcsim and the vSphere provider all run. */
const AFTER_UP = (d: RunningDemo): boolean => d.output().includes('== banlieue provider vsphere') && d.running('vcsim');
/** Building cached tools, starting a control plane, vcsim and two roles, on a busy machine. */
const REACH_MS = 300_000;

interface RunningDemo {
  readonly guard: ChildProcess;
  readonly watch: DescendantWatch;
  output(): string;
  /** Whether a descendant named `comm` runs now. */
  running(comm: string): boolean;
  /** The group the demo's steps lead (the guard's child). */
  group(): number | undefined;
  exited: Promise<number | null>;
}

const demos: RunningDemo[] = [];

function startDemo(): RunningDemo {
  const guard = spawn(process.execPath, ['--import', 'tsx', 'test/support/demo.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = guard.pid;
  if (pid === undefined) throw new Error('the demo did not start');
  let out = '';
  guard.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  guard.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const watch = new DescendantWatch(pid);
  let leader: number | undefined;
  const demo: RunningDemo = {
    guard,
    watch,
    output: () => out,
    running: (comm) => watch.descendants().some((p) => p.comm === comm && isRunning(p)),
    group: () => {
      leader ??= watch.descendants().find((p) => p.ppid === pid && p.pgrp === p.pid)?.pid;
      return leader;
    },
    exited: new Promise((resolve) => guard.once('exit', (code) => resolve(code))),
  };
  demos.push(demo);
  return demo;
}

/** What still runs of the demo: descendants seen, and members of its group (zombies do not run). */
function leftBehind(demo: RunningDemo): ProcessEntry[] {
  demo.watch.sample();
  const group = demo.group();
  const seen = demo.watch.descendants().filter(isRunning);
  const inGroup = group === undefined ? [] : processTable().filter((p) => p.pgrp === group && p.state !== 'Z');
  return [...new Map([...seen, ...inGroup].map((p) => [p.pid, p])).values()];
}

const describeProcesses = (ps: ProcessEntry[]): string => ps.map((p) => `${p.pid} ${p.comm} (parent ${p.ppid}, group ${p.pgrp}, state ${p.state})`).join('\n');

/** Interrupts the demo once `when` holds, with `how`; then nothing of it may run. */
async function interruptAndCheck(when: (d: RunningDemo) => boolean, what: string, how: (d: RunningDemo) => void): Promise<void> {
  const demo = startDemo();
  await waitFor(
    `the demo to reach ${what}`,
    () => {
      if (demo.guard.exitCode !== null) throw new Error(`the demo exited ${demo.guard.exitCode} first:\n${demo.output()}`);
      return when(demo) || undefined;
    },
    REACH_MS,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}\n${demo.output().slice(-4000)}`);
  });
  const group = demo.group();
  expect(group, 'the demo runs its steps as a process group of their own').toBeDefined();
  const started = demo.watch.descendants().filter(isRunning);
  expect(started.length, describeProcesses(started)).toBeGreaterThan(1);

  how(demo);
  // Ten seconds of grace before SIGKILL, and then some, on a busy machine.
  await waitFor('the demo to exit', () => demo.guard.exitCode !== null || demo.guard.signalCode !== null || undefined, 120_000);
  demo.watch.stop();
  const left = leftBehind(demo);
  expect(left, `still running after the demo exited:\n${describeProcesses(left)}\n--- demo output ---\n${demo.output().slice(-3000)}`).toEqual([]);
  expect(demo.output()).toContain('stopping every process it started');
}

afterEach(async () => {
  // A failed test still stops what it started: the guard stops its group on
  // SIGTERM; then SIGKILL what was seen descending from it (the same pid and
  // start time: never a process that merely reused a pid).
  for (const d of demos.splice(0)) {
    if (d.guard.exitCode === null && d.guard.signalCode === null) {
      d.guard.kill('SIGTERM');
      await Promise.race([d.exited, new Promise((r) => setTimeout(r, 30_000))]);
    }
    d.watch.stop();
    for (const p of d.watch.descendants().filter(isRunning)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}, 60_000);

describe('make demo leaves no process behind', () => {
  it(
    'when interrupted with SIGINT (Ctrl-C) during start-up',
    async () => {
      await interruptAndCheck(DURING_START_UP, 'start-up', (d) => d.guard.kill('SIGINT'));
    },
    2 * REACH_MS,
  );

  it(
    'when its reader closes its stdout during start-up',
    async () => {
      // The next line the demo prints meets EPIPE (as `make demo | head` would).
      await interruptAndCheck(DURING_START_UP, 'start-up', (d) => d.guard.stdout?.destroy());
    },
    2 * REACH_MS,
  );

  it(
    'when sent SIGTERM once it is up',
    async () => {
      await interruptAndCheck(AFTER_UP, 'its roles running', (d) => d.guard.kill('SIGTERM'));
    },
    2 * REACH_MS,
  );

  it(
    'when its steps crash once it is up (killed, no clean-up of their own)',
    async () => {
      await interruptAndCheck(AFTER_UP, 'its roles running', (d) => {
        const leader = d.group();
        if (leader !== undefined) process.kill(leader, 'SIGKILL');
      });
    },
    2 * REACH_MS,
  );
});
