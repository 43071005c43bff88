// One `cloud-hypervisor --api-socket path=<dir>/api.sock` process per machine, started
// detached from the provider: its own session and process group (setsid), stdio to
// the machine's log file, its pid in a pidfile. Nothing ties it to the provider's
// lifetime, so the VM survives a provider restart or upgrade; the next provider finds
// it again through the state directory (vmm-adoption.ts).
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { BackendError, BackendErrorKind, isBackendError } from '../backend-error.js';
import { VmmClient } from './client/vmm-client.js';
import type { VmmPingResponse } from './client/vmm-types.js';
import { findVmmProcess } from './host-process.js';
import { DEFAULT_STATE_ROOT, ensureStateDir, readPidFile, removeRuntimeFiles, vmmPaths, writePidFile, type VmmPaths } from './state-dir.js';

export interface VmmHostOptions {
  /** The cloud-hypervisor binary (or anything command-line compatible with it). */
  readonly binary: string;
  /** Where the machine directories are. @default DEFAULT_STATE_ROOT */
  readonly root?: string;
  /** Arguments after `--api-socket path=…`, e.g. `['-v']`. @default [] */
  readonly extraArgs?: readonly string[];
  /**
   * A command the VMM is started through, which must exec it in place (its pid becomes
   * the VMM's), e.g. `['ip', 'netns', 'exec', 'guests']` to run it in the network
   * namespace its taps are in. @default none: the binary itself
   */
  readonly launcher?: readonly string[];
  /** How long a new VMM has to answer vmm.ping. @default 30000 */
  readonly startTimeoutMs?: number;
  /** How long a VMM has to exit after vmm.shutdown before it is killed. @default 30000 */
  readonly stopTimeoutMs?: number;
  /** Deadline of each API call made here. @default 10000 */
  readonly callTimeoutMs?: number;
}

/** A VMM this provider started or adopted. Holds no resource: dropping it is free. */
export interface VmmHandle {
  readonly uuid: string;
  /** The VMM's pid, leader of its own process group. */
  readonly pid: number;
  readonly paths: VmmPaths;
  readonly client: VmmClient;
  /** What vmm.ping reported when it was started or adopted. */
  readonly ping: VmmPingResponse;
}

const POLL_MS = 100;

/** The paths and a client for machine `uuid` under the configured root. */
export function vmmTarget(options: VmmHostOptions, uuid: string): { paths: VmmPaths; client: VmmClient } {
  const paths = vmmPaths(options.root ?? DEFAULT_STATE_ROOT, uuid);
  return { paths, client: new VmmClient({ socketPath: paths.apiSocket, timeoutMs: options.callTimeoutMs ?? 10_000 }) };
}

/**
 * Starts the VMM of machine `uuid` and waits until it answers vmm.ping at a supported
 * version. Rejected (code VmmAlreadyRunning) when one already serves that directory.
 */
export async function startVmm(options: VmmHostOptions, uuid: string): Promise<VmmHandle> {
  const { paths, client } = vmmTarget(options, uuid);
  await ensureStateDir(paths);
  const running = await findVmmProcess(await readPidFile(paths), paths.apiSocket);
  if (running) throw new BackendError(BackendErrorKind.Rejected, `a VMM (pid ${running.pid}) already serves ${paths.dir}`, { code: 'VmmAlreadyRunning' });
  await removeRuntimeFiles(paths);

  const { pid, hasExited } = await spawnDetached(options, paths);
  await writePidFile(paths, pid);
  try {
    const ping = await waitForApi(client, hasExited, paths, options.startTimeoutMs ?? 30_000);
    return { uuid, pid, paths, client, ping };
  } catch (error) {
    await killVmm(pid, paths);
    throw error;
  }
}

/**
 * Stops a VMM: vmm.shutdown, wait for the process to exit, else SIGKILL its process
 * group. Then removes its socket and pidfile; logs and disks stay. A VMM already gone
 * is stopped.
 */
export async function stopVmm(options: VmmHostOptions, handle: Pick<VmmHandle, 'paths' | 'client'>): Promise<void> {
  const { paths, client } = handle;
  const found = await findVmmProcess(await readPidFile(paths), paths.apiSocket);
  if (found) {
    try {
      await client.shutdownVmm();
    } catch (error) {
      // A VMM that does not answer is killed below; any other refusal is worth knowing.
      if (!isBackendError(error, BackendErrorKind.Unreachable)) throw error;
    }
    const exited = await until(async () => (await findVmmProcess(found.pid, paths.apiSocket)) === undefined, options.stopTimeoutMs ?? 30_000);
    if (!exited) await killVmm(found.pid, paths);
  }
  await removeRuntimeFiles(paths);
}

/** SIGKILLs the VMM's process group if `pid` still is that VMM, and waits for it to go. */
export async function killVmm(pid: number, paths: VmmPaths): Promise<void> {
  if (!(await findVmmProcess(pid, paths.apiSocket))) return;
  try {
    // The group: a wrapper script and what it started go together (the VMM is its leader, setsid).
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  const gone = await until(async () => (await findVmmProcess(pid, paths.apiSocket)) === undefined, 10_000);
  if (!gone) throw new BackendError(BackendErrorKind.Unreachable, `VMM pid ${pid} of ${paths.dir} survived SIGKILL`, { code: 'VmmUnkillable' });
}

/** The new VMM's pid, and whether it exited (told by the child's exit, not by /proc: see waitForApi). */
async function spawnDetached(options: VmmHostOptions, paths: VmmPaths): Promise<{ pid: number; hasExited: () => boolean }> {
  const log = openSync(paths.logFile, 'a', 0o600);
  try {
    const [file = options.binary, ...prefix] = [...(options.launcher ?? []), options.binary];
    const child = spawn(file, [...prefix, '--api-socket', `path=${paths.apiSocket}`, ...(options.extraArgs ?? [])], {
      cwd: paths.dir,
      detached: true,
      stdio: ['ignore', log, log],
    });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('spawn', () => resolve(child.pid ?? 0));
      child.once('error', (error) =>
        reject(new BackendError(BackendErrorKind.Rejected, `cannot start ${options.binary}: ${error.message}`, { cause: error, code: 'VmmSpawnFailed' })),
      );
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    // Not waited for: the provider may exit while the VMM runs on.
    child.unref();
    return { pid, hasExited: () => exited };
  } finally {
    closeSync(log);
  }
}

/**
 * Waits for vmm.ping. Whether the VMM died meanwhile is told by its exit event, not by
 * its /proc command line: while it starts, a launcher (`ip netns exec`, the simulator's
 * `#!/bin/sh` wrapper) execs in place, and in the middle of an exec the command line
 * can read empty (a live simulator started through `ip netns exec` was once taken for
 * dead here, about one start in twenty under load).
 */
async function waitForApi(client: VmmClient, hasExited: () => boolean, paths: VmmPaths, timeoutMs: number): Promise<VmmPingResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await client.pingSupported();
    } catch (error) {
      if (!isBackendError(error, BackendErrorKind.Unreachable)) throw error;
      if (hasExited()) {
        throw new BackendError(BackendErrorKind.Rejected, `the VMM of ${paths.dir} exited before serving its API: ${await logTail(paths)}`, {
          code: 'VmmExited',
        });
      }
      if (Date.now() > deadline) {
        throw new BackendError(BackendErrorKind.Unreachable, `the VMM of ${paths.dir} did not answer on ${paths.apiSocket} within ${timeoutMs} ms`, {
          cause: error,
          code: 'Timeout',
        });
      }
    }
    await delay(POLL_MS);
  }
}

/** Polls `done` until true or `timeoutMs` passed; tells which. */
async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    await delay(POLL_MS);
  }
}

async function logTail(paths: VmmPaths): Promise<string> {
  const text = await readFile(paths.logFile, 'utf8').catch(() => '');
  const lines = text.trim().split('\n').slice(-5).join(' | ');
  return lines === '' ? `(nothing in ${paths.logFile})` : lines;
}
