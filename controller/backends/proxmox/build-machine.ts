// VirtualMachine → ProxmoxMachine. The node comes from the failure domain; the
// cloud-init seed ISO (user-data and static addresses) needs an ISO storage.
import type { ProxmoxMachine, ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { ProxmoxMachineKind } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { missingRaw, type BuildResult, type CarriedTargets, type MachineBuildContext } from '../machine-build.js';
import { IMAGE_KIND, namedTarget, type NamedTarget } from '../named-targets.js';

/** Template VMIDs, as the VMImage source rule and ProxmoxMachine.spec.templateVmid accept them. */
const VMID = /^[1-9][0-9]{2,8}$/;

export function buildProxmoxMachine(context: MachineBuildContext): BuildResult<ProxmoxMachine> {
  const { node, isoStorage } = context.raw;
  if (!node) return missingRaw(context, 'node');
  if (!VMID.test(context.imageRef)) {
    return {
      ok: false,
      message: `VMImage "${context.input.image.metadata.name ?? ''}" proxmox ref "${context.imageRef}" is not a template VMID (an integer from 100)`,
    };
  }
  const needsSeedIso = context.input.userDataSecretName !== undefined || context.nics.some((n) => n.ipam?.static);
  if (needsSeedIso && !isoStorage) return missingRaw(context, 'isoStorage (needed for the cloud-init seed ISO)');
  const [osDisk, ...dataDisks] = context.disks;
  // The image says how its template is cloned.
  const cloneMode = context.input.image.spec.sources.find((source) => source.providerClass === 'proxmox')?.cloneMode;
  if (!osDisk) return { ok: false, message: 'the class has no disks' };
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: ProxmoxMachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        node,
        templateVmid: Number(context.imageRef),
        ...(cloneMode ? { cloneMode } : {}),
        storage: osDisk.backendId,
        cores: context.hardware.cpus,
        sockets: 1,
        memoryMiB: context.hardware.memoryMiB,
        firmware: context.input.vmClass.spec.firmware ?? 'bios',
        osDiskSizeGiB: osDisk.disk.sizeGiB,
        ...(dataDisks.length > 0
          ? { dataDisks: dataDisks.map(({ disk, backendId }) => ({ name: disk.name, sizeGiB: disk.sizeGiB, storage: backendId })) }
          : {}),
        nics: context.nics.map(({ nic, backendId, ipam }) => {
          // A network class's VLAN tag, published per failure domain by the provider (mapping.ts).
          const vlan = context.raw[`vlan.${nic.networkClass}`];
          return {
            name: nic.name,
            bridge: backendId,
            ...(vlan !== undefined && /^[1-9][0-9]{0,3}$/.test(vlan) ? { vlan: Number(vlan) } : {}),
            model: 'virtio' as const,
            ...(ipam ? { ipam } : {}),
          };
        }),
        ...(needsSeedIso && isoStorage ? { isoStorage } : {}),
      },
    },
  };
}

/** Template VMID, the OS disk's then each data disk's storage, and each interface's bridge. */
export function proxmoxCarriedTargets(spec: ProxmoxMachineSpec): CarriedTargets {
  return {
    imageRef: String(spec.templateVmid),
    ...(spec.storage !== undefined ? { storage: [spec.storage, ...(spec.dataDisks ?? []).map((d) => d.storage ?? '')] } : {}),
    networks: spec.nics.map((n) => n.bridge),
  };
}

/** The template VMID, and the node, storages, resource pool, bridges and VLANs the clone is placed on. */
export function proxmoxNamedTargets(spec: ProxmoxMachineSpec): NamedTarget[] {
  return [
    ...namedTarget('spec.templateVmid', [IMAGE_KIND], spec.templateVmid),
    ...namedTarget('spec.node', ['node'], spec.node),
    ...namedTarget('spec.storage', ['storage'], spec.storage),
    ...(spec.dataDisks ?? []).flatMap((d, i) => namedTarget(`spec.dataDisks[${i}].storage`, ['storage'], d.storage)),
    ...namedTarget('spec.isoStorage', ['storage', 'isoStorage'], spec.isoStorage),
    ...namedTarget('spec.pool', ['pool'], spec.pool),
    ...spec.nics.flatMap((n, i) => [...namedTarget(`spec.nics[${i}].bridge`, ['bridge'], n.bridge), ...namedTarget(`spec.nics[${i}].vlan`, ['vlan'], n.vlan)]),
  ];
}
