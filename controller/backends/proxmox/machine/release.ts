// Releasing a machine's VM (deletionPolicy Retain): once no task of the
// machine runs and PVE holds no lock on it, one config write (guarded by the
// config's digest) takes its owner tag away and swaps the owner line of its
// description for the released-from line (vm-marks.ts). Power, disks, the seed
// ISO and smbios1 stay as they are.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { DestroyOptions, MachineRequest, ReleaseResult } from '../../backend.js';
import { releaseVm, type ReleasableVm } from '../../ownership.js';
import { nodeOf } from './clone.js';
import { reachable } from './reachable.js';
import { earlierTaskEnded } from './tasks.js';
import type { FoundVm, PassView } from './vm-locator.js';
import { marksOf, ownerTag, releasedDescription, withoutTag } from './vm-marks.js';

type Request = MachineRequest<ProxmoxMachineSpec>;

export async function releaseMachineVm(view: PassView, request: Request, { log }: DestroyOptions): Promise<ReleaseResult> {
  const earlier = await earlierTaskEnded(view.client, request.taskRef);
  if (earlier.state === 'running') return { state: 'InProgress', message: `${earlier.message} before releasing the VM` };
  const found = await reachable(nodeOf(request), () => view.find(request, { hint: earlier.state === 'done' ? earlier.task.vm : undefined }));
  if (!found) return { state: 'Absent' };
  const { ref, config } = found;
  if (config.lock !== undefined) return { state: 'InProgress', message: `VM ${ref.vmid} on ${ref.node} is locked (${config.lock})` };
  const result = await releaseVm(request, releasable(view, request, found), log);
  // Nothing of this machine's is looked for there again.
  view.forget(request);
  return result;
}

function releasable(view: PassView, request: Request, { ref, config }: FoundVm): ReleasableVm {
  return {
    ref: `${ref.node}/${ref.vmid}`,
    marks: marksOf(config.description),
    unmark: async (releasedFrom) => {
      const tags = withoutTag(config.tags, ownerTag(request.owner));
      // PUT: no task; the digest refuses it when the config changed since it was read (the next pass reads it again).
      await view.client.qemu.setConfig(ref, {
        description: releasedDescription(config.description, releasedFrom),
        ...(tags === undefined ? { delete: 'tags' } : { tags }),
        digest: config.digest,
      });
    },
  };
}
