// What a provisioned VM lacks of its spec's hardware (pure): CPU and memory to
// set, disks to grow. Disks only grow; a disk added to the spec after the clone
// is reported, not attached (its unit and datastore were decided at clone time).
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { VmHardware } from '../client/vim-types.js';
import type { VmConfigSpec } from '../client/vm-specs.js';
import { KB_PER_GIB } from './clone-spec.js';

export interface Resize {
  /** CPU and memory changes; empty when they match. */
  readonly cpuMemory: Pick<VmConfigSpec, 'numCPUs' | 'memoryMB'>;
  /** Disk grows (online on vSphere). */
  readonly disks: Pick<VmConfigSpec, 'diskGrows'>;
  /** spec.disks entries the VM has no disk for. */
  readonly unattachedDisks: readonly string[];
}

export function resizeOf(spec: VSphereMachineSpec, hardware: VmHardware): Resize {
  const disks = [...hardware.disks].sort((a, b) => a.key - b.key);
  const wanted = spec.disks ?? [];
  // As the clone made them (clone-spec.ts): spec disk 0 is the template's OS disk (lowest key); the
  // others were added after every template disk, so they are the last ones, in order.
  const added = Math.min(wanted.length - 1, disks.length - 1);
  const diskFor = (i: number): (typeof disks)[number] | undefined => (i === 0 ? disks[0] : i <= added ? disks[disks.length - added + i - 1] : undefined);
  const diskGrows = wanted.flatMap((d, i) => {
    const disk = diskFor(i);
    const capacityKB = d.sizeGiB * KB_PER_GIB;
    return disk && capacityKB > disk.capacityKB ? [{ disk, capacityKB }] : [];
  });
  return {
    cpuMemory: {
      ...(hardware.numCPUs !== undefined && hardware.numCPUs !== spec.numCpus ? { numCPUs: spec.numCpus } : {}),
      ...(hardware.memoryMB !== undefined && hardware.memoryMB !== spec.memoryMiB ? { memoryMB: spec.memoryMiB } : {}),
    },
    disks: diskGrows.length > 0 ? { diskGrows } : {},
    unattachedDisks: wanted.slice(Math.max(1, added + 1)).map((d) => d.name),
  };
}

export function isNoop(resize: Resize): boolean {
  return Object.keys(resize.cpuMemory).length === 0 && resize.disks.diskGrows === undefined;
}
