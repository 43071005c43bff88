// The VmConfig of a machine (pure): what vm.create is sent, and what is saved
// beside the VMM so a VMM that died is started again with the same VM. The
// machine's UUID is the SMBIOS system UUID (how a VMM is recognised as ours,
// vmm-adoption.ts) and its ownership mark an OEM string (ADR 16): the guest
// can read both but set neither.
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { PayloadConfig, VmConfig } from '../client/vmm-types.js';

/** The OEM string carrying the ownership mark: `banlieue.owner=<kind>/<namespace>/<name>`. */
export const OWNER_OEM_PREFIX = 'banlieue.owner=';

export interface VmConfigInput {
  readonly uuid: string;
  /** ownerMark(request.owner). */
  readonly ownerMark: string;
  readonly spec: Pick<CloudHypervisorMachineSpec, 'cpus' | 'memory'>;
  readonly payload: PayloadConfig;
  /** The qcow2 overlay of the image. */
  readonly osDisk: string;
  /** The NoCloud seed (ISO 9660, attached as a read-only raw disk: Cloud Hypervisor has no CD-ROM). */
  readonly seedDisk: string;
  readonly nics: readonly { readonly tap: string; readonly mac: string }[];
  readonly serialLog: string;
}

const MIB = 1024 * 1024;

export function toVmConfig(input: VmConfigInput): VmConfig {
  const { spec } = input;
  return {
    cpus: { boot_vcpus: spec.cpus.boot, max_vcpus: spec.cpus.max ?? spec.cpus.boot, nested: false },
    memory: { size: spec.memory.sizeMiB * MIB, ...(spec.memory.hugepages ? { hugepages: true } : {}) },
    payload: input.payload,
    disks: [
      // The overlay reads its image through its backing file, which v53 opens only when told to.
      { id: 'os', path: input.osDisk, image_type: 'Qcow2', backing_files: true },
      { id: 'seed', path: input.seedDisk, readonly: true, image_type: 'Raw' },
    ],
    net: input.nics.map((nic, i) => ({ id: `nic${i}`, tap: nic.tap, mac: nic.mac })),
    rng: { src: '/dev/urandom' },
    serial: { mode: 'File', file: input.serialLog },
    console: { mode: 'Off' },
    platform: { system_uuid: input.uuid, oem_strings: [`${OWNER_OEM_PREFIX}${input.ownerMark}`] },
  };
}

/** The mark a VmConfig carries; undefined when it has none. */
export function ownerMarkOf(config: VmConfig | undefined): string | undefined {
  return config?.platform?.oem_strings?.find((s) => s.startsWith(OWNER_OEM_PREFIX))?.slice(OWNER_OEM_PREFIX.length);
}

/** CPU and memory of `config` changed to the spec's; undefined when they already match. */
export function resizedConfig(config: VmConfig, spec: Pick<CloudHypervisorMachineSpec, 'cpus' | 'memory'>): VmConfig | undefined {
  const boot = spec.cpus.boot;
  const max = spec.cpus.max ?? boot;
  const size = spec.memory.sizeMiB * MIB;
  if (config.cpus?.boot_vcpus === boot && config.cpus.max_vcpus === max && config.memory?.size === size) return undefined;
  return { ...config, cpus: { ...config.cpus, boot_vcpus: boot, max_vcpus: max }, memory: { ...config.memory, size } };
}
