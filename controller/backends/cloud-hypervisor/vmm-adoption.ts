// What a provider does on start: list the state root and sort every machine directory
// into VMMs it drives again (adopted), VMMs it must not touch (foreign), VMMs that do
// not answer but still run (unresponsive) and VMMs that are gone (dead, their socket and
// pidfile removed). Ownership: a VMM is ours when its VM carries the directory's UUID
// as `platform.system_uuid` (set by vm.create), or when it has no VM yet (started, not
// created: the crash window between the two).
import { isBackendError } from '../backend-error.js';
import { isVmmApiError, VmmErrorCode } from './client/vmm-error.js';
import type { VmInfo, VmmPingResponse } from './client/vmm-types.js';
import { findVmmProcess } from './host-process.js';
import { DEFAULT_STATE_ROOT, listMachineUuids, readPidFile, removeRuntimeFiles, writePidFile, type VmmPaths } from './state-dir.js';
import { vmmTarget, type VmmHandle, type VmmHostOptions } from './vmm-process.js';

export type ScannedVmm =
  /** Answers at a supported version and is ours; `vm` undefined when no VM is created in it. */
  | { readonly outcome: 'adopted'; readonly handle: VmmHandle; readonly vm: VmInfo | undefined }
  /** Answers, but is not ours to drive (another UUID, or an unsupported version): left alone. */
  | { readonly outcome: 'foreign'; readonly paths: VmmPaths; readonly reason: string }
  /** Its process runs but its socket does not answer: left alone for the caller to decide. */
  | { readonly outcome: 'unresponsive'; readonly paths: VmmPaths; readonly pid: number; readonly reason: string }
  /** No VMM process and no answer: its runtime files were removed. */
  | { readonly outcome: 'dead'; readonly paths: VmmPaths; readonly reason: string };

/** Sorts every machine directory under the root; one entry per directory, in UUID order. */
export async function scanVmms(options: VmmHostOptions): Promise<ScannedVmm[]> {
  const uuids = await listMachineUuids(options.root ?? DEFAULT_STATE_ROOT);
  return Promise.all(uuids.map((uuid) => scanVmm(options, uuid)));
}

/** Sorts one machine directory (see scanVmms). */
export async function scanVmm(options: VmmHostOptions, uuid: string): Promise<ScannedVmm> {
  const { paths, client } = vmmTarget(options, uuid);
  const running = await findVmmProcess(await readPidFile(paths), paths.apiSocket);
  let ping: VmmPingResponse;
  try {
    ping = await client.pingSupported();
  } catch (error) {
    // It answered, but not as a VMM we drive: an HTTP error, or a version below the floor.
    if (isVmmApiError(error) || (isBackendError(error) && error.code === VmmErrorCode.VmmVersionUnsupported)) {
      return { outcome: 'foreign', paths, reason: (error as Error).message };
    }
    if (!isBackendError(error)) throw error;
    if (running) return { outcome: 'unresponsive', paths, pid: running.pid, reason: error.message };
    await removeRuntimeFiles(paths);
    return { outcome: 'dead', paths, reason: `no VMM process and ${error.message}` };
  }
  const vm = await client.findVm();
  const owner = vm?.config.platform?.system_uuid;
  if (vm && owner !== uuid) {
    return { outcome: 'foreign', paths, reason: `the VM in ${paths.dir} carries system_uuid ${owner === undefined ? '(none)' : `"${owner}"`}, not "${uuid}"` };
  }
  // The pidfile may be missing or stale (a crash before it was written): the VMM says who it is.
  const pid = running?.pid ?? ping.pid;
  // Without a pid it could not be killed if it hung: not ours to drive.
  if (pid === undefined) return { outcome: 'foreign', paths, reason: `no VMM process found for ${paths.apiSocket} and vmm.ping reports no pid` };
  if (!running) await writePidFile(paths, pid);
  return { outcome: 'adopted', handle: { uuid, pid, paths, client, ping }, vm };
}
