// A machine's VMM as this pass finds it (vmm-adoption.ts): adopted when it answers at a
// supported version and its VM is the machine record's (its UUID, and the record's mark in
// its OEM strings); a dead one's runtime files are cleared; one that is not the record's, or
// hangs, is an error. Which machine the record belongs to is the machine recipe's to check.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { VmmPaths } from '../state-dir.js';
import { scanVmm, type ScannedVmm } from '../vmm-adoption.js';
import type { HostRuntime } from './host-runtime.js';
import type { MachineRecord } from './machine-record.js';
import type { LiveVmm } from './power.js';
import { ownerMarkOf } from './vm-config.js';

/** The VMM serving the record's machine as found now: adopted, or none; throws for one not the record's, or hung. */
export async function findVmm(host: HostRuntime, paths: VmmPaths, record: MachineRecord): Promise<LiveVmm> {
  const scanned = await scanVmm(host.vmm, paths.uuid);
  if (scanned.outcome === 'adopted' && scanned.vm && ownerMarkOf(scanned.vm.config) !== record.owner) {
    throw new BackendError(
      BackendErrorKind.NotOwned,
      `the VM of the VMM in ${paths.dir} carries mark ${ownerMarkOf(scanned.vm.config) ?? '(none)'}, not its record's ${record.owner ?? '(none)'}`,
    );
  }
  return liveOf(scanned, paths);
}

/** An adopted VMM's handle and VM; none for a dead one; throws for one not ours to drive, or hung. */
export function liveOf(scanned: ScannedVmm, paths: VmmPaths): LiveVmm {
  switch (scanned.outcome) {
    case 'adopted':
      return { handle: scanned.handle, vm: scanned.vm };
    case 'dead':
      return undefined;
    case 'foreign':
      throw new BackendError(BackendErrorKind.NotOwned, `the VMM in ${paths.dir} is not this machine's to drive: ${scanned.reason}`);
    case 'unresponsive':
      throw new BackendError(BackendErrorKind.Unreachable, `the VMM (pid ${scanned.pid}) of ${paths.dir} runs but does not answer: ${scanned.reason}`, {
        code: 'VmmUnresponsive',
      });
  }
}
