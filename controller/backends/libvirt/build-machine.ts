// VirtualMachine → LibvirtMachine. A failure domain whose raw networkKind is
// "bridge" plugs NICs into host bridges; otherwise into libvirt networks.
import type { LibvirtMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { LibvirtMachineKind } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { singleStorageTarget, type MachineBuildContext, type BuildResult } from '../machine-build.js';

export function buildLibvirtMachine(context: MachineBuildContext): BuildResult<LibvirtMachine> {
  const pool = singleStorageTarget(context, 'a LibvirtMachine pool');
  if (!pool.ok) return pool;
  const { name, namespace } = context.metadata;
  const sourceKind = context.raw.networkKind === 'bridge' ? 'bridge' : 'network';
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: LibvirtMachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        domainName: `${namespace ?? ''}-${name ?? ''}`,
        pool: pool.backendId,
        bootSource: { kind: 'backingVolume', volume: context.imageRef },
        vcpus: context.hardware.cpus,
        memoryMiB: context.hardware.memoryMiB,
        firmware: context.input.vmClass.spec.firmware ?? 'bios',
        disks: context.disks.map(({ disk }) => ({ name: disk.name, sizeGiB: disk.sizeGiB })),
        network: context.nics.map(({ nic, backendId, ipam }) => ({
          name: nic.name,
          source: { kind: sourceKind, name: backendId },
          ...(ipam ? { ipam } : {}),
        })),
      },
    },
  };
}
