import { describe, expect, it } from 'vitest';
import { computeEffectiveHardware } from '../../../controller/scheduler/effective-hardware.js';
import { aClass, aVm } from '../reconcilers/virtual-machine/fixtures.js';

describe('effective hardware', () => {
  it('is the class hardware when the VM overrides nothing', () => {
    expect(computeEffectiveHardware(aVm(), aClass())).toEqual({ ok: true, hardware: aClass().spec.hardware });
  });

  it('takes cpus, memory and grown disks from spec.hardwareOverride, keeping disk order and other fields', () => {
    const vm = aVm({ hardwareOverride: { cpus: 16, memoryMiB: 65536, diskOverrides: [{ name: 'data', sizeGiB: 500 }] } });
    expect(computeEffectiveHardware(vm, aClass())).toEqual({
      ok: true,
      hardware: {
        cpus: 16,
        memoryMiB: 65536,
        disks: [
          { name: 'os', sizeGiB: 20, storageClass: 'fast' },
          { name: 'data', sizeGiB: 500, storageClass: 'fast', provisioning: 'thick' },
        ],
      },
    });
  });

  it('accepts a disk override equal to the class size', () => {
    const vm = aVm({ hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB: 20 }] } });
    expect(computeEffectiveHardware(vm, aClass()).ok).toBe(true);
  });

  it.each([
    [
      'a disk override smaller than the class disk',
      [{ name: 'os', sizeGiB: 10 }],
      {
        kind: 'DiskShrink',
        field: 'spec.hardwareOverride.diskOverrides[0].sizeGiB',
        message: 'spec.hardwareOverride.diskOverrides[0].sizeGiB 10 is smaller than class disk "os" (20 GiB)',
      },
    ],
    [
      'a disk override naming no class disk',
      [
        { name: 'data', sizeGiB: 200 },
        { name: 'scratch', sizeGiB: 5 },
      ],
      {
        kind: 'UnknownDisk',
        field: 'spec.hardwareOverride.diskOverrides[1].name',
        message: 'spec.hardwareOverride.diskOverrides[1].name "scratch" is not a disk of class "small"',
      },
    ],
  ])('refuses %s, naming the field', (_, diskOverrides, error) => {
    const vm = aVm({ hardwareOverride: { diskOverrides } });
    expect(computeEffectiveHardware(vm, aClass())).toEqual({ ok: false, error });
  });
});
