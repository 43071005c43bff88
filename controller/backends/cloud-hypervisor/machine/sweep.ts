// What deletions left on the host: a machine whose deletion began here (the
// tombstone destroy.ts writes into its record before it touches anything) and
// that is gone before the deletion finished (a crash, the Provider gone, the
// finalizer then removed by hand) leaves its directory, disk and taps. The
// sweep finishes such a deletion: only when the record's mark names a machine
// the role serves and knows to be gone, the record carries the tombstone, and
// the VMM is dead.
//
// Anything else stays (ADR 16): a directory without a record, a record without
// a mark (released: deletionPolicy Retain) or with another namespace's or
// kind's, a running VMM. So does the directory of a machine that is gone
// without its deletion having begun: `clusterctl move` deletes the source's
// machines with their finalizers removed, and a finalizer removed by hand is
// no request to destroy anything. banlieue never destroys a VM's disk unless
// someone allowed to delete its machine asked; such a directory is said once,
// in a warning, for an operator to remove by hand.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../runtime/log.js';
import type { MarkJudgement } from '../../backend.js';
import type { MachineOwner } from '../../ownership.js';
import { listMachineUuids, removeStateDir, vmmPaths } from '../state-dir.js';
import { scanVmm } from '../vmm-adoption.js';
import type { HostRuntime } from './host-runtime.js';
import { readRecord } from './machine-record.js';

/** `<kind>/<namespace>/<name>` back to its parts; undefined for anything else (or no mark). */
export function parseOwnerMark(mark: string | undefined): MachineOwner | undefined {
  const parts = (mark ?? '').split('/');
  const [kind, namespace, name] = parts;
  return parts.length === 3 && kind && namespace && name ? { kind, namespace, name } : undefined;
}

/** One provider's sweeps of its host; it remembers which directories it left with a warning, so each is said once. */
export class HostSweep {
  private readonly warned = new Set<string>();

  constructor(private readonly host: HostRuntime) {}

  /** Finishes the deletions of machines `judge` calls Orphaned that began here and whose VMM is dead; returns their UUIDs. */
  async run(judge: (owner: MachineOwner) => MarkJudgement, log: Logger): Promise<string[]> {
    const { host } = this;
    const removed: string[] = [];
    for (const uuid of await listMachineUuids(host.config.stateRoot)) {
      const paths = vmmPaths(host.config.stateRoot, uuid);
      const record = await readRecord(paths).catch(() => undefined);
      const owner = parseOwnerMark(record?.owner);
      // Judged after the record is read: a machine's record is written only once the role's cache holds the machine.
      if (!record || !owner || judge(owner) !== 'Orphaned') continue;
      const facts = { uuid, dir: paths.dir, diskDir: record.diskDir, owner: record.owner };
      if (record.deletionStartedAt === undefined) {
        this.warnOnce(
          log,
          `${uuid} never deleted`,
          facts,
          'Leaving the directory, disk and taps of a machine that no longer exists: its deletion never began on this host (moved, or its finalizer removed by hand); remove them by hand when the VM is not wanted',
        );
        continue;
      }
      const vmm = await scanVmm(host.vmm, uuid);
      if (vmm.outcome !== 'dead') {
        this.warnOnce(
          log,
          `${uuid} VMM ${vmm.outcome}`,
          { ...facts, vmm: vmm.outcome },
          'Leaving the directory of a machine that no longer exists: its VMM still runs',
        );
        continue;
      }
      log.info(
        { ...facts, deletionStartedAt: record.deletionStartedAt },
        'Finishing the deletion of a machine that no longer exists: removing its directory, disk and taps',
      );
      for (const tap of record.taps) await host.ip.delete(tap.name);
      // Only the machine's own disk directory in a storage class of this host, whatever the record says.
      if (Object.values(host.config.storageClasses).some((dir) => record.diskDir === join(dir, uuid)))
        await rm(record.diskDir, { recursive: true, force: true });
      await removeStateDir(paths);
      removed.push(uuid);
    }
    return removed;
  }

  private warnOnce(log: Logger, key: string, facts: Record<string, unknown>, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    log.warn(facts, message);
  }
}
