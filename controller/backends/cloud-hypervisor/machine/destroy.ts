// Deleting a machine: a tombstone in its record (sweep.ts), the guest brought
// down (power button, grace period across passes, vm.shutdown), vm.delete,
// vmm.shutdown (killed if it will not exit), then its taps, OS disk and state
// directory removed, and all of it verified gone before the machine's
// finalizer may go. A VM whose record or VMM is not
// this machine's is never touched (NotOwned).
import { rm, stat } from 'node:fs/promises';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import { assertOwnedBy } from '../../ownership.js';
import { findVmmProcess } from '../host-process.js';
import { removeStateDir, vmmPaths, type VmmPaths } from '../state-dir.js';
import { stopVmm } from '../vmm-process.js';
import { findVmm } from './find-vmm.js';
import type { HostRuntime } from './host-runtime.js';
import { assertThisHost } from './host-placement.js';
import { readRecord, writeRecord, type MachineRecord } from './machine-record.js';
import { tapName } from './nic-identity.js';
import { bringGuestDown } from './power.js';

type Request = MachineRequest<CloudHypervisorMachineSpec>;

export async function destroyMachine(host: HostRuntime, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  assertThisHost(host.config, request.raw);
  const paths = vmmPaths(host.config.stateRoot, request.uuid);
  if (!(await exists(paths.dir))) return { state: 'Gone', existed: false };
  const record = await readRecord(paths);
  if (record) assertOwnedBy(request.owner, request.uuid, record.owner);
  const live = await findVmm(host, paths, request);
  // The record is written first: without one, a VMM here is not ours and nothing else was made.
  if (!record && live) throw new BackendError(BackendErrorKind.NotOwned, `a VMM serves ${paths.dir}, which has no banlieue machine record`);
  // The tombstone first: from here on the deletion was asked for, and the sweep finishes it if the machine goes first.
  if (record && record.deletionStartedAt === undefined) await writeRecord(paths, { ...record, deletionStartedAt: host.now().toISOString() });
  if (live) {
    const waiting = await bringGuestDown(host, live);
    if (waiting) return { state: 'InProgress', reason: waiting.reason, message: `deleting: ${waiting.message}` };
    await live.handle.client.deleteVm();
    await stopVmm(host.vmm, live.handle);
  }
  const taps = tapsOf(request, record);
  for (const tap of taps) await host.ip.delete(tap);
  if (record) await rm(record.diskDir, { recursive: true, force: true });
  await removeStateDir(paths);
  await verifyGone(host, paths, live?.handle.pid, record, taps);
  log.info({ uuid: request.uuid, dir: paths.dir }, 'Deleted the VM, its VMM, taps and disks');
  return { state: 'Gone', existed: record !== undefined };
}

/** The record's taps, and those the spec would have made (a record from before a NIC was added names fewer). */
function tapsOf(request: Request, record: MachineRecord | undefined): string[] {
  const derived = (request.spec.nics ?? []).map((_nic, i) => tapName(request.uuid, i));
  return [...new Set([...(record?.taps.map((t) => t.name) ?? []), ...derived])];
}

/** Throws (retried) while anything of the machine is still on the host. */
async function verifyGone(host: HostRuntime, paths: VmmPaths, pid: number | undefined, record: MachineRecord | undefined, taps: readonly string[]): Promise<void> {
  const left: string[] = [];
  if (await findVmmProcess(pid, paths.apiSocket)) left.push(`VMM pid ${pid ?? ''}`);
  if (await exists(paths.dir)) left.push(paths.dir);
  if (record && (await exists(record.diskDir))) left.push(record.diskDir);
  const links = new Set((await host.ip.list()).map((l) => l.name));
  left.push(...taps.filter((t) => links.has(t)).map((t) => `tap ${t}`));
  if (left.length > 0) throw new BackendError(BackendErrorKind.Unreachable, `deleting left ${left.join(', ')} on host ${host.config.hostName}`, { code: 'NotGone' });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
