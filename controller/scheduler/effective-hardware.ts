// The hardware a VirtualMachine gets: its class hardware with
// spec.hardwareOverride applied. Disks may only grow (the OS disk is a clone of
// the image, and no backend shrinks a disk safely).
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { ClassDisk, VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';

export interface EffectiveHardware {
  readonly cpus: number;
  readonly memoryMiB: number;
  /** Class disks in class order, sizes overridden; the first is the OS disk. */
  readonly disks: readonly ClassDisk[];
}

/** Why an override cannot apply; `field` is the path of the offending override. */
export interface HardwareOverrideError {
  readonly kind: 'DiskShrink' | 'UnknownDisk';
  readonly field: string;
  readonly message: string;
}

export type EffectiveHardwareResult =
  { readonly ok: true; readonly hardware: EffectiveHardware } | { readonly ok: false; readonly error: HardwareOverrideError };

export function computeEffectiveHardware(vm: VirtualMachine, vmClass: VMClass): EffectiveHardwareResult {
  const base = vmClass.spec.hardware;
  const override = vm.spec.hardwareOverride;
  const diskOverrides = override?.diskOverrides ?? [];
  for (const [i, o] of diskOverrides.entries()) {
    const field = `spec.hardwareOverride.diskOverrides[${i}]`;
    const disk = base.disks.find((d) => d.name === o.name);
    if (!disk) {
      return fail('UnknownDisk', `${field}.name`, `"${o.name}" is not a disk of class "${className(vmClass)}"`);
    }
    if (o.sizeGiB < disk.sizeGiB) {
      return fail('DiskShrink', `${field}.sizeGiB`, `${o.sizeGiB} is smaller than class disk "${disk.name}" (${disk.sizeGiB} GiB)`);
    }
  }
  return {
    ok: true,
    hardware: {
      cpus: override?.cpus ?? base.cpus,
      memoryMiB: override?.memoryMiB ?? base.memoryMiB,
      disks: base.disks.map((d) => ({ ...d, sizeGiB: diskOverrides.find((o) => o.name === d.name)?.sizeGiB ?? d.sizeGiB })),
    },
  };
}

const className = (vmClass: VMClass): string => vmClass.metadata.name ?? '';

function fail(kind: HardwareOverrideError['kind'], field: string, detail: string): EffectiveHardwareResult {
  return { ok: false, error: { kind, field, message: `${field} ${detail}` } };
}
