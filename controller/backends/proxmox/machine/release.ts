// Releasing a machine's VM (deletionPolicy Retain), once the machine recipe found it by UUID
// and mark and no lock holds it: one config write (guarded by the config's digest) takes its
// owner tag away and swaps the owner line of its description for the released-from line
// (vm-marks.ts). Power, disks, the seed ISO and smbios1 stay as they are.
import type { MachineOwner } from '../../ownership.js';
import type { Owned } from '../../kit/machine/steps.js';
import type { FoundVm, PassView } from './vm-locator.js';
import { ownerTag, releasedDescription, withoutTag } from './vm-marks.js';

export async function unmarkVm(view: PassView, { ref, config }: Owned<FoundVm>, releasedFrom: string, owner: MachineOwner): Promise<void> {
  const tags = withoutTag(config.tags, ownerTag(owner));
  // PUT: no task; the digest refuses it when the config changed since it was read (the next pass reads it again).
  await view.client.qemu.setConfig(ref, {
    description: releasedDescription(config.description, releasedFrom),
    ...(tags === undefined ? { delete: 'tags' } : { tags }),
    digest: config.digest,
  });
}
