// nextFreeUnits: where a new disk can go on each bus.
import { describe, expect, it } from 'vitest';
import { nextFreeUnits } from '../../../../controller/backends/vsphere/client/disk-units.js';
import type { DiskControllerInfo, VirtualDiskInfo } from '../../../../controller/backends/vsphere/client/vim-types.js';
import { parseXml } from '../../../../controller/backends/vsphere/client/xml-element.js';

const WIRE = parseXml('<VirtualDevice/>');

function controller(deviceType: string, unitsInUse?: number[]): DiskControllerInfo {
  return { key: 1000, deviceType, busNumber: 0, deviceKeys: [], ...(unitsInUse ? { unitsInUse } : {}) };
}

function disks(controllerKey: number, units: readonly number[]): VirtualDiskInfo[] {
  return units.map((unitNumber, i) => ({
    key: 2000 + i,
    controllerKey,
    unitNumber,
    capacityKB: 1024,
    label: undefined,
    datastore: undefined,
    fileName: undefined,
    wire: WIRE,
  }));
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('nextFreeUnits', () => {
  it('skips SCSI unit 7, the controller’s own', () => {
    expect(nextFreeUnits(controller('ParaVirtualSCSIController'), disks(1000, range(0, 7)), 2)).toEqual([8, 9]);
  });

  it('fills gaps first and ignores disks on other controllers', () => {
    expect(nextFreeUnits(controller('VirtualLsiLogicController'), [...disks(1000, [0, 2]), ...disks(1001, [1, 3])], 3)).toEqual([1, 3, 4]);
  });

  it('counts units other devices (a SATA CD-ROM) take on the controller', () => {
    expect(nextFreeUnits(controller('VirtualAHCIController', [0]), disks(1000, [1]), 1)).toEqual([2]);
  });

  it.each([
    ['ParaVirtualSCSIController', 15, 15],
    ['VirtualNVMEController', 15, 14],
    ['VirtualAHCIController', 30, 29],
  ])('gives a %s %s units, the last being %s', (deviceType, count, last) => {
    const free = nextFreeUnits(controller(deviceType), [], 64);

    expect(free).toHaveLength(count);
    expect(free.at(-1)).toBe(last);
  });

  it('answers fewer units than asked when the controller fills up', () => {
    expect(nextFreeUnits(controller('VirtualNVMEController'), disks(1000, range(0, 13)), 5)).toEqual([13, 14]);
  });

  it('answers none for a controller disks do not attach to', () => {
    expect(nextFreeUnits(controller('VirtualIDEController'), [], 1)).toEqual([]);
  });
});
