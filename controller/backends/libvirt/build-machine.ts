// VirtualMachine → LibvirtMachine. A NIC whose network class targets a host
// bridge (the failure domain's raw `bridges`, or every NIC when raw
// networkKind is "bridge") is plugged into that bridge; otherwise into the
// libvirt network of that name.
import type { LibvirtMachine, LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { LibvirtMachineKind } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { singleStorageTarget, type BuildResult, type CarriedTargets, type MachineBuildContext } from '../machine-build.js';
import { IMAGE_KIND, namedTarget, type NamedTarget } from '../named-targets.js';
import { defaultDomainName } from './domain-name.js';
import { RawKey } from './mapping.js';

export function buildLibvirtMachine(context: MachineBuildContext): BuildResult<LibvirtMachine> {
  const pool = singleStorageTarget(context, 'a LibvirtMachine pool');
  if (!pool.ok) return pool;
  const { name, namespace } = context.metadata;
  const bridges = new Set((context.raw[RawKey.Bridges] ?? '').split(',').filter(Boolean));
  const kindOf = (target: string): 'bridge' | 'network' => (context.raw.networkKind === 'bridge' || bridges.has(target) ? 'bridge' : 'network');
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: LibvirtMachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        domainName: defaultDomainName(namespace ?? '', name ?? ''),
        pool: pool.backendId,
        bootSource: { kind: 'backingVolume', volume: context.imageRef },
        vcpus: context.hardware.cpus,
        memoryMiB: context.hardware.memoryMiB,
        firmware: context.input.vmClass.spec.firmware ?? 'bios',
        disks: context.disks.map(({ disk }) => ({ name: disk.name, sizeGiB: disk.sizeGiB })),
        network: context.nics.map(({ nic, backendId, ipam }) => ({
          name: nic.name,
          source: { kind: kindOf(backendId), name: backendId },
          ...(ipam ? { ipam } : {}),
        })),
      },
    },
  };
}

/** Boot volume, the pool of every disk, and where each interface is plugged. */
export function libvirtCarriedTargets(spec: LibvirtMachineSpec): CarriedTargets {
  return {
    imageRef: spec.bootSource.volume,
    storage: spec.disks.map(() => spec.pool),
    networks: (spec.network ?? []).map((n) => n.source.name),
  };
}

/** The pools the disks and the boot volume are in, and what each interface plugs into. */
export function libvirtNamedTargets(spec: LibvirtMachineSpec): NamedTarget[] {
  const slash = spec.bootSource.volume.indexOf('/');
  return [
    ...namedTarget('spec.bootSource.volume', [IMAGE_KIND], spec.bootSource.volume),
    ...namedTarget('spec.pool', ['pool'], spec.pool),
    ...namedTarget('spec.bootSource.volume', ['pool'], slash > 0 ? spec.bootSource.volume.slice(0, slash) : undefined),
    ...(spec.network ?? []).flatMap((n, i) => namedTarget(`spec.network[${i}].source.name`, [n.source.kind], n.source.name)),
  ];
}
