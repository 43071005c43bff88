// Run a command as the leader of a process group of its own and, however this
// process ends its watch (the command exits or crashes, SIGINT, SIGTERM, our
// stdout closed by its reader), stop every process in that group: the
// command's children and their children, even those it left behind. The
// command's TMPDIR is a directory of ours, removed once the group is gone.
// `make demo` runs through this, so that no etcd, kube-apiserver, vcsim or
// role process outlives it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { processTable, type ProcessEntry } from './process-table.js';

/** How long the group gets between SIGTERM and SIGKILL. */
const GRACE_MS = 10_000;
const POLL_MS = 100;

/** The processes still running in group `pgid` (zombies have exited: not counted). */
function groupMembers(pgid: number): ProcessEntry[] {
  return processTable().filter((p) => p.pgrp === pgid && p.state !== 'Z');
}

const groupAlive = (pgid: number): boolean => groupMembers(pgid).length > 0;

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already empty.
  }
}

async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (!groupAlive(pgid)) return true;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return !groupAlive(pgid);
}

/** SIGTERM to the whole group, SIGKILL to what is left after the grace period. */
async function stopGroup(pgid: number): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitGroupGone(pgid, GRACE_MS)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGroupGone(pgid, GRACE_MS);
}

/**
 * Runs `command args` in a new process group with its output relayed to
 * ours; resolves with its exit code (128 + signal number when stopped, as a
 * shell reports it) once every process of the group is gone.
 */
export async function runAsProcessGroup(command: string, args: readonly string[]): Promise<number> {
  const tmp = mkdtempSync(join(tmpdir(), 'banlieue-group-'));
  // detached: the child calls setsid(), so it leads a group (and session) of
  // its own that a terminal's Ctrl-C does not reach: we decide how it stops.
  const child = spawn(command, [...args], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  const pgid = child.pid;
  if (pgid === undefined) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`could not start ${command}`);
  }
  let stopping: Promise<void> | undefined;
  const stop = (why: string): Promise<void> => {
    if (!stopping) {
      process.stderr.write(`\n== ${why}: stopping every process it started\n`);
      stopping = stopGroup(pgid);
    }
    return stopping;
  };
  const onSignal = (signal: NodeJS.Signals): void => void stop(`${signal}`);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGHUP', onSignal);
  // Our reader went away (`make demo | head`): nobody is watching any more.
  process.stdout.on('error', () => void stop('stdout closed'));
  process.stderr.on('error', () => undefined);
  child.stdout?.on('data', (d: Buffer) => {
    if (process.stdout.writable) process.stdout.write(d);
  });
  child.stderr?.on('data', (d: Buffer) => {
    if (process.stderr.writable) process.stderr.write(d);
  });

  const code = await new Promise<number>((resolve) => {
    child.on('exit', (exitCode, signal) => resolve(exitCode ?? 128 + (signal ? constants.signals[signal] : 0)));
  });
  // The leader is gone (done, crashed or stopped): whatever it left in its group goes too.
  const left = groupMembers(pgid);
  if (left.length > 0) await stop(`${code === 0 ? 'finished' : `exited ${code}`}, leaving ${left.map((p) => `${p.comm} (${p.pid})`).join(', ')}`);
  await stopping;
  rmSync(tmp, { recursive: true, force: true });
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  process.off('SIGHUP', onSignal);
  return code;
}

/**
 * In the group's leader: stop the group when the process watching it is gone
 * (killed with SIGKILL, which it cannot handle), instead of running on as
 * orphans. Checks the parent once a second.
 */
export function stopGroupWithParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) signalGroup(process.pid, 'SIGKILL');
  }, 1000).unref();
}
