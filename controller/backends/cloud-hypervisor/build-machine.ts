// VirtualMachine → CloudHypervisorMachine. The host resolves storage and network
// classes itself, so the spec carries class names, not backend targets.
import type { CloudHypervisorMachine, CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { CloudHypervisorMachineKind } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { BuildResult, CarriedTargets, MachineBuildContext } from '../machine-build.js';

export function buildCloudHypervisorMachine(context: MachineBuildContext): BuildResult<CloudHypervisorMachine> {
  const [osDisk, ...dataDisks] = context.disks;
  if (!osDisk) return { ok: false, message: 'the class has no disks' };
  // CloudHypervisorMachine has no data disks: refuse rather than drop them.
  if (dataDisks.length > 0) {
    return {
      ok: false,
      message: `CloudHypervisorMachine has only an OS disk, but class "${context.input.vmClass.metadata.name ?? ''}" has ${context.disks.length} disks`,
    };
  }
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: CloudHypervisorMachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        bootSource: { kind: 'image', image: context.imageRef },
        cpus: { boot: context.hardware.cpus },
        memory: { sizeMiB: context.hardware.memoryMiB },
        osDiskSizeGiB: osDisk.disk.sizeGiB,
        storageClass: osDisk.disk.storageClass,
        nics: context.nics.map(({ nic, ipam }) => ({ name: nic.name, networkClass: nic.networkClass, ...(ipam ? { ipam } : {}) })),
      },
    },
  };
}

/** The boot image only: storage and networks are classes, which the host resolves. */
export function cloudHypervisorCarriedTargets(spec: CloudHypervisorMachineSpec): CarriedTargets {
  return { imageRef: spec.bootSource.image };
}
