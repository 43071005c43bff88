// A machine's VMM as this pass finds it (vmm-adoption.ts): adopted when it
// answers at a supported version and its VM carries the machine's UUID and mark;
// a dead one's runtime files are cleared; one that is not ours, or hangs, is an error.
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { MachineRequest } from '../../backend.js';
import { assertOwnedBy } from '../../ownership.js';
import type { VmmPaths } from '../state-dir.js';
import { scanVmm } from '../vmm-adoption.js';
import type { HostRuntime } from './host-runtime.js';
import type { LiveVmm } from './power.js';
import { ownerMarkOf } from './vm-config.js';

type Request = MachineRequest<CloudHypervisorMachineSpec>;

/** The machine's VMM as found now: adopted (answering, ours), none, or an error for one not ours or hung. */
export async function findVmm(host: HostRuntime, paths: VmmPaths, request: Request): Promise<LiveVmm> {
  const scanned = await scanVmm(host.vmm, paths.uuid);
  switch (scanned.outcome) {
    case 'adopted':
      if (scanned.vm) assertOwnedBy(request.owner, request.uuid, ownerMarkOf(scanned.vm.config));
      return { handle: scanned.handle, vm: scanned.vm };
    case 'dead':
      return undefined;
    case 'foreign':
      throw new BackendError(BackendErrorKind.NotOwned, `the VMM in ${paths.dir} is not this machine's to drive: ${scanned.reason}`);
    case 'unresponsive':
      throw new BackendError(BackendErrorKind.Unreachable, `the VMM (pid ${scanned.pid}) of ${paths.dir} runs but does not answer: ${scanned.reason}`, { code: 'VmmUnresponsive' });
  }
}
