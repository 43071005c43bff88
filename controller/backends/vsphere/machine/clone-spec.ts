// The CloneSpec of a VSphereMachine (pure): identity (BIOS UUID), sizing,
// firmware, the OS disk grown and extra disks added, the template's NICs
// re-plugged (or added, or removed) to match spec.network. Everything in one
// CloneVM_Task, so a VM either exists fully shaped or not at all, and marked
// as its machine's (ownership.ts).
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { nextFreeUnits } from '../client/disk-units.js';
import type { VmHardware } from '../client/vim-types.js';
import type { CloneSpec, VmConfigSpec } from '../client/vm-specs.js';
import type { CloneTargets } from './clone-targets.js';

export const KB_PER_GIB = 1024 * 1024;

/** The extraConfig key of the ownership mark (controller/backends/ownership.ts); not under guestinfo., so the guest cannot read or set it. */
export const OWNER_MARK_KEY = 'banlieue.owner';
/** Where a released VM keeps the mark it had (ownership.ts `decideRelease`): nothing adopts by it. */
export const RELEASED_FROM_KEY = 'banlieue.released-from';

export function buildCloneSpec(spec: VSphereMachineSpec, uuid: string, ownerMark: string, targets: CloneTargets, template: VmHardware): CloneSpec {
  const firmware = spec.firmware ?? 'bios';
  const config: VmConfigSpec = {
    uuid,
    extraConfig: { [OWNER_MARK_KEY]: ownerMark },
    numCPUs: spec.numCpus,
    memoryMB: spec.memoryMiB,
    firmware: firmware === 'bios' ? 'bios' : 'efi',
    ...(firmware === 'bios' ? {} : { efiSecureBoot: firmware === 'efi-secure' }),
    ...diskChanges(spec, targets, template),
    ...nicChanges(spec, targets, template),
  };
  return {
    location: { pool: targets.pool, folder: targets.folder, ...(targets.datastore ? { datastore: targets.datastore.ref } : {}) },
    config,
    powerOn: false,
  };
}

/** Disk 0 is the template's OS disk, grown (never shrunk) to its size; the others are added beside it. */
function diskChanges(spec: VSphereMachineSpec, targets: CloneTargets, template: VmHardware): Pick<VmConfigSpec, 'diskGrows' | 'diskAdds'> {
  const [osSpec, ...extra] = spec.disks ?? [];
  if (!osSpec) return {};
  const osDisk = [...template.disks].sort((a, b) => a.key - b.key)[0];
  if (!osDisk) throw new BackendError(BackendErrorKind.Rejected, `template "${spec.template}" has no disk to boot from`);
  const capacityKB = osSpec.sizeGiB * KB_PER_GIB;
  const diskGrows = capacityKB > osDisk.capacityKB ? [{ disk: osDisk, capacityKB }] : [];
  if (extra.length === 0) return { diskGrows };
  const controller = template.diskControllers.find((c) => c.key === osDisk.controllerKey);
  if (!controller)
    throw new BackendError(BackendErrorKind.Rejected, `template "${spec.template}": the OS disk's controller ${osDisk.controllerKey} is not a disk controller`);
  const units = nextFreeUnits(controller, template.disks, extra.length);
  if (units.length < extra.length) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `template "${spec.template}": controller ${controller.deviceType} has room for ${units.length} more disks, spec.disks asks for ${extra.length}`,
    );
  }
  const diskAdds = extra.map((disk, i) => ({
    controllerKey: controller.key,
    unitNumber: units[i] ?? 0,
    capacityKB: disk.sizeGiB * KB_PER_GIB,
    provisioning: disk.provisioning ?? 'thin',
    ...(targets.datastore ? { datastore: targets.datastore } : {}),
  }));
  return { diskGrows, diskAdds };
}

/** spec.network replaces the template's NICs, in order: edit what exists, add the rest, remove the surplus. */
function nicChanges(spec: VSphereMachineSpec, targets: CloneTargets, template: VmHardware): Pick<VmConfigSpec, 'nicEdits' | 'nicAdds' | 'nicRemovals'> {
  const wanted = spec.network ?? [];
  if (wanted.length === 0) return {};
  const cards = [...template.cards].sort((a, b) => a.key - b.key);
  const mac = (i: number): { macAddress?: string } => {
    const macAddress = wanted[i]?.macAddress;
    return macAddress ? { macAddress } : {};
  };
  return {
    nicEdits: cards.slice(0, wanted.length).map((card, i) => ({ card, target: targetAt(targets, i), ...mac(i) })),
    nicAdds: wanted.slice(cards.length).map((_, j) => ({ target: targetAt(targets, cards.length + j), ...mac(cards.length + j) })),
    nicRemovals: cards.slice(wanted.length),
  };
}

function targetAt(targets: CloneTargets, i: number): CloneTargets['nics'][number] {
  const target = targets.nics[i];
  if (!target) throw new Error(`no resolved port group for spec.network[${i}]`);
  return target;
}
