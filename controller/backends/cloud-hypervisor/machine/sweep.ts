// State directories no machine owns any more: a machine deleted while its
// Provider was gone (the finalizer dropped with a Warning, ADR 13) or had its
// finalizer removed by hand leaves its directory, disk and taps on the host.
// A directory goes only when its machine.json mark names a machine the role
// serves and knows to be gone, and its VMM is dead; a directory without a
// record, with a mark of another namespace or kind, or with a VMM that still
// runs or answers is never touched (ADR 16).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../runtime/log.js';
import type { MarkJudgement } from '../../backend.js';
import type { MachineOwner } from '../../ownership.js';
import { listMachineUuids, removeStateDir, vmmPaths } from '../state-dir.js';
import { scanVmm } from '../vmm-adoption.js';
import type { HostRuntime } from './host-runtime.js';
import { readRecord } from './machine-record.js';

/** `<kind>/<namespace>/<name>` back to its parts; undefined for anything else. */
export function parseOwnerMark(mark: string): MachineOwner | undefined {
  const parts = mark.split('/');
  const [kind, namespace, name] = parts;
  return parts.length === 3 && kind && namespace && name ? { kind, namespace, name } : undefined;
}

/** Removes the directories, disks and taps of machines `judge` calls Orphaned whose VMM is dead; returns their UUIDs. */
export async function sweepOrphans(host: HostRuntime, judge: (owner: MachineOwner) => MarkJudgement, log: Logger): Promise<string[]> {
  const removed: string[] = [];
  for (const uuid of await listMachineUuids(host.config.stateRoot)) {
    const paths = vmmPaths(host.config.stateRoot, uuid);
    const record = await readRecord(paths).catch(() => undefined);
    const owner = record ? parseOwnerMark(record.owner) : undefined;
    // Judged after the record is read: a machine's record is written only once the role's cache holds the machine.
    if (!record || !owner || judge(owner) !== 'Orphaned') continue;
    const vmm = await scanVmm(host.vmm, uuid);
    if (vmm.outcome !== 'dead') {
      log.warn({ uuid, dir: paths.dir, owner: record.owner, vmm: vmm.outcome }, 'Leaving the directory of a machine that no longer exists: its VMM still runs');
      continue;
    }
    log.info({ uuid, dir: paths.dir, owner: record.owner }, 'Removing the directory, disk and taps of a machine that no longer exists');
    for (const tap of record.taps) await host.ip.delete(tap.name);
    // Only the machine's own disk directory in a storage class of this host, whatever the record says.
    if (Object.values(host.config.storageClasses).some((dir) => record.diskDir === join(dir, uuid))) await rm(record.diskDir, { recursive: true, force: true });
    await removeStateDir(paths);
    removed.push(uuid);
  }
  return removed;
}
