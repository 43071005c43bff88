// Releasing a machine's VM (deletionPolicy Retain): its record loses the mark
// (kept as `releasedFrom`) and any deletion tombstone, and nothing else
// changes. Its VMM runs on as it ran (or stays stopped), its disk, seed and
// taps stay: no pass, adoption or sweep of banlieue touches a directory whose
// record carries no mark. The VmConfig inside the running VMM still names the
// machine in its OEM strings, but nothing is adopted by those without the
// record's mark.
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { DestroyOptions, MachineRequest, ReleaseResult } from '../../backend.js';
import { releaseVm } from '../../ownership.js';
import { findVmmProcess } from '../host-process.js';
import { readPidFile, vmmPaths } from '../state-dir.js';
import type { HostRuntime } from './host-runtime.js';
import { assertThisHost } from './host-placement.js';
import { readRecord, writeRecord } from './machine-record.js';

type Request = MachineRequest<CloudHypervisorMachineSpec>;

export async function releaseMachine(host: HostRuntime, request: Request, { log }: DestroyOptions): Promise<ReleaseResult> {
  assertThisHost(host.config, request.raw);
  const paths = vmmPaths(host.config.stateRoot, request.uuid);
  const record = await readRecord(paths);
  if (!record) {
    // The record is written before any VMM starts (provision.ts): without one, a VMM here is not ours, and nothing else is a VM.
    if (await findVmmProcess(await readPidFile(paths), paths.apiSocket)) throw new BackendError(BackendErrorKind.NotOwned, `a VMM serves ${paths.dir}, which has no banlieue machine record`);
    return { state: 'Absent' };
  }
  const marks = { owner: record.owner, releasedFrom: record.releasedFrom };
  return releaseVm(
    request,
    {
      ref: paths.dir,
      marks,
      unmark: async (releasedFrom) => {
        const { owner: _mark, deletionStartedAt: _tombstone, ...rest } = record;
        await writeRecord(paths, { ...rest, releasedFrom });
      },
    },
    log,
  );
}
