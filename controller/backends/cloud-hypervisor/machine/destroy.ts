// Deleting a machine, once the machine recipe found its record with the machine's mark: a
// tombstone in its record (sweep.ts), the guest brought down (power button, grace period
// across passes, vm.shutdown), vm.delete, vmm.shutdown (killed if it will not exit), then its
// taps, OS disk and state directory removed, and all of it verified gone before the
// machine's finalizer may go. Without a record (and without a VMM: that one is not the
// machine's), only what the machine's UUID names is removed: its taps and directory.
import { rm, stat } from 'node:fs/promises';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import type { Owned } from '../../kit/machine/steps.js';
import { findVmmProcess } from '../host-process.js';
import { removeStateDir, vmmPaths, type VmmPaths } from '../state-dir.js';
import { stopVmm } from '../vmm-process.js';
import { findVmm } from './find-vmm.js';
import type { HostRuntime } from './host-runtime.js';
import { writeRecord, type ChVm, type MachineRecord } from './machine-record.js';
import { tapName } from './nic-identity.js';
import { bringGuestDown } from './power.js';

type Request = MachineRequest<CloudHypervisorMachineSpec>;

export async function destroyMachine(host: HostRuntime, { paths, record }: Owned<ChVm>, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  const live = await findVmm(host, paths, record);
  // The tombstone first: from here on the deletion was asked for, and the sweep finishes it if the machine goes first.
  if (record.deletionStartedAt === undefined) await writeRecord(paths, { ...record, deletionStartedAt: host.now().toISOString() });
  if (live) {
    const waiting = await bringGuestDown(host, live);
    if (waiting) return { state: 'InProgress', reason: waiting.reason, message: `deleting: ${waiting.message}` };
    await live.handle.client.deleteVm();
    await stopVmm(host.vmm, live.handle);
  }
  await removeMachine(host, paths, request, record, live?.handle.pid);
  log.info({ uuid: request.uuid, dir: paths.dir }, 'Deleted the VM, its VMM, taps and disks');
  return { state: 'Gone', existed: true };
}

/** No record (and no VMM) for the machine: its taps and an empty or half-made directory go. */
export async function destroyLeftovers(host: HostRuntime, request: Request): Promise<DestroyResult> {
  const paths = vmmPaths(host.config.stateRoot, request.uuid);
  if (await exists(paths.dir)) await removeMachine(host, paths, request, undefined, undefined);
  return { state: 'Gone', existed: false };
}

async function removeMachine(host: HostRuntime, paths: VmmPaths, request: Request, record: MachineRecord | undefined, pid: number | undefined): Promise<void> {
  const taps = tapsOf(request, record);
  for (const tap of taps) await host.ip.delete(tap);
  if (record) await rm(record.diskDir, { recursive: true, force: true });
  await removeStateDir(paths);
  await verifyGone(host, paths, pid, record, taps);
}

/** The record's taps, and those the spec would have made (a record from before a NIC was added names fewer). */
function tapsOf(request: Request, record: MachineRecord | undefined): string[] {
  const derived = (request.spec.nics ?? []).map((_nic, i) => tapName(request.uuid, i));
  return [...new Set([...(record?.taps.map((t) => t.name) ?? []), ...derived])];
}

/** Throws (retried) while anything of the machine is still on the host. */
async function verifyGone(
  host: HostRuntime,
  paths: VmmPaths,
  pid: number | undefined,
  record: MachineRecord | undefined,
  taps: readonly string[],
): Promise<void> {
  const left: string[] = [];
  if (await findVmmProcess(pid, paths.apiSocket)) left.push(`VMM pid ${pid ?? ''}`);
  if (await exists(paths.dir)) left.push(paths.dir);
  if (record && (await exists(record.diskDir))) left.push(record.diskDir);
  const links = new Set((await host.ip.list()).map((l) => l.name));
  left.push(...taps.filter((t) => links.has(t)).map((t) => `tap ${t}`));
  if (left.length > 0)
    throw new BackendError(BackendErrorKind.Unreachable, `deleting left ${left.join(', ')} on host ${host.config.hostName}`, { code: 'NotGone' });
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
