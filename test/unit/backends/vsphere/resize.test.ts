// resizeOf: what a provisioned VM lacks of its spec (CPU, memory, disk sizes).
import { describe, expect, it } from 'vitest';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { VmHardware } from '../../../../controller/backends/vsphere/client/vim-types.js';
import { toVirtualDisks } from '../../../../controller/backends/vsphere/client/vm-decoders.js';
import { parseXml } from '../../../../controller/backends/vsphere/client/xml-element.js';
import { isNoop, resizeOf } from '../../../../controller/backends/vsphere/machine/resize.js';

const GIB_KB = 1024 * 1024;

const disk = (key: number, unit: number, capacityKB: number): string => `
  <VirtualDevice xsi:type="VirtualDisk">
    <key>${key}</key>
    <backing xsi:type="VirtualDiskFlatVer2BackingInfo"><fileName>[ds] vm/vm_${key}.vmdk</fileName></backing>
    <controllerKey>1000</controllerKey><unitNumber>${unit}</unitNumber><capacityInKB>${capacityKB}</capacityInKB>
  </VirtualDevice>`;

/** A VM with 2 CPUs, 2048 MiB, a 20 GiB OS disk (key 2000) and a 5 GiB data disk (key 2001), listed data disk first. */
const VM: VmHardware = {
  numCPUs: 2,
  memoryMB: 2048,
  firmware: 'bios',
  cards: [],
  disks: toVirtualDisks(parseXml(`<val xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${disk(2001, 1, 5 * GIB_KB)}${disk(2000, 0, 20 * GIB_KB)}</val>`)),
  diskControllers: [],
};

const spec = (change: Partial<VSphereMachineSpec> = {}): VSphereMachineSpec => ({
  template: 'ubuntu',
  numCpus: 2,
  memoryMiB: 2048,
  disks: [
    { name: 'os', sizeGiB: 20 },
    { name: 'data', sizeGiB: 5 },
  ],
  ...change,
});

describe('resizeOf', () => {
  it('is a no-op when the VM has its spec', () => {
    const resize = resizeOf(spec(), VM);
    expect(isNoop(resize)).toBe(true);
    expect(resize.unattachedDisks).toEqual([]);
  });

  it('sets CPUs and memory that differ, up or down', () => {
    expect(resizeOf(spec({ numCpus: 4 }), VM).cpuMemory).toEqual({ numCPUs: 4 });
    expect(resizeOf(spec({ memoryMiB: 1024 }), VM).cpuMemory).toEqual({ memoryMB: 1024 });
  });

  it('grows the disk at the spec index, in key order; never shrinks one', () => {
    const grow = resizeOf(
      spec({
        disks: [
          { name: 'os', sizeGiB: 30 },
          { name: 'data', sizeGiB: 1 },
        ],
      }),
      VM,
    );
    expect(grow.disks.diskGrows?.map((g) => [g.disk.key, g.capacityKB])).toEqual([[2000, 30 * GIB_KB]]);
    expect(grow.cpuMemory).toEqual({});
  });

  it("pairs the spec's extra disks with the disks the clone added, after all the template's disks", () => {
    // A template with an OS disk (2000) and a second disk (2001); the clone added "data" (2002).
    const vm: VmHardware = {
      ...VM,
      disks: toVirtualDisks(
        parseXml(
          `<val xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">${disk(2000, 0, 20 * GIB_KB)}${disk(2001, 1, 8 * GIB_KB)}${disk(2002, 2, 5 * GIB_KB)}</val>`,
        ),
      ),
    };
    const grow = resizeOf(
      spec({
        disks: [
          { name: 'os', sizeGiB: 20 },
          { name: 'data', sizeGiB: 10 },
        ],
      }),
      vm,
    );
    expect(grow.disks.diskGrows?.map((g) => [g.disk.key, g.capacityKB])).toEqual([[2002, 10 * GIB_KB]]);
    expect(grow.unattachedDisks).toEqual([]);
  });

  it('reports spec disks the VM has no disk for, by name', () => {
    const resize = resizeOf(
      spec({
        disks: [
          { name: 'os', sizeGiB: 20 },
          { name: 'data', sizeGiB: 5 },
          { name: 'logs', sizeGiB: 10 },
        ],
      }),
      VM,
    );
    expect(resize.unattachedDisks).toEqual(['logs']);
    expect(isNoop(resize)).toBe(true);
  });
});
