// Disk controller buses and their free unit numbers. Pure: the reconciler
// picks where a new disk goes before it sends anything.
import type { DiskControllerInfo, VirtualDiskInfo } from './vim-types.js';

export type DiskBus = 'scsi' | 'nvme' | 'sata';

// Controller types disks attach to (a device's xsi:type is always concrete; the
// bases are listed in case a server sends them). IDE is left out: no hot-add.
const BUS_BY_CONTROLLER: ReadonlyMap<string, DiskBus> = new Map([
  ['VirtualSCSIController', 'scsi'],
  ['ParaVirtualSCSIController', 'scsi'],
  ['VirtualBusLogicController', 'scsi'],
  ['VirtualLsiLogicController', 'scsi'],
  ['VirtualLsiLogicSASController', 'scsi'],
  ['VirtualNVMEController', 'nvme'],
  ['VirtualSATAController', 'sata'],
  ['VirtualAHCIController', 'sata'],
]);

// Units per controller (vSphere configuration maximums): 15 SCSI disks on
// units 0-15 around the controller's own unit 7, 15 NVMe namespaces, 30 SATA ports.
const UNIT_COUNT: Readonly<Record<DiskBus, number>> = { scsi: 16, nvme: 15, sata: 30 };
const SCSI_CONTROLLER_UNIT = 7;

/** The bus of a disk controller type; undefined for any other device type. */
export function diskControllerBus(deviceType: string): DiskBus | undefined {
  return BUS_BY_CONTROLLER.get(deviceType);
}

/**
 * The lowest `count` unit numbers free on `controller`, given the VM's disks
 * (and the controller's `unitsInUse`, which covers CD-ROMs). Shorter than
 * `count` when the controller fills up: the caller picks another controller
 * or gives up.
 */
export function nextFreeUnits(controller: DiskControllerInfo, disks: readonly VirtualDiskInfo[], count: number): number[] {
  const bus = diskControllerBus(controller.deviceType);
  if (bus === undefined) return [];
  const taken = new Set(controller.unitsInUse ?? []);
  for (const disk of disks) {
    if (disk.controllerKey === controller.key && disk.unitNumber !== undefined) taken.add(disk.unitNumber);
  }
  const free: number[] = [];
  for (let unit = 0; unit < UNIT_COUNT[bus] && free.length < count; unit++) {
    if (bus === 'scsi' && unit === SCSI_CONTROLLER_UNIT) continue;
    if (!taken.has(unit)) free.push(unit);
  }
  return free;
}
