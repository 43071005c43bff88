// VirtualMachine → VSphereMachine. Placement facts (datacenter, cluster,
// resourcePool) come from the failure domain the vSphere provider published.
import type { VSphereMachine, VSphereMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { VSphereMachineKind } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { missingRaw, singleStorageTarget, type BuildResult, type CarriedTargets, type MachineBuildContext } from '../machine-build.js';
import { IMAGE_KIND, namedTarget, type NamedTarget } from '../named-targets.js';

export function buildVSphereMachine(context: MachineBuildContext): BuildResult<VSphereMachine> {
  const { datacenter, cluster, resourcePool } = context.raw;
  if (!datacenter || !cluster) return missingRaw(context, 'datacenter/cluster');
  const datastore = singleStorageTarget(context, 'a VSphereMachine datastore');
  if (!datastore.ok) return datastore;
  const folder = context.input.vm.spec.folder;
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: VSphereMachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        template: context.imageRef,
        datacenter,
        cluster,
        ...(resourcePool ? { resourcePool } : {}),
        ...(folder ? { folder } : {}),
        datastore: datastore.backendId,
        numCpus: context.hardware.cpus,
        memoryMiB: context.hardware.memoryMiB,
        firmware: context.input.vmClass.spec.firmware ?? 'bios',
        disks: context.disks.map(({ disk }) => ({ name: disk.name, sizeGiB: disk.sizeGiB, provisioning: disk.provisioning ?? 'thin' })),
        network: context.nics.map(({ nic, backendId, ipam }) => ({ name: nic.name, portGroup: backendId, ...(ipam ? { ipam } : {}) })),
      },
    },
  };
}

/** Template, the datastore of every disk, and each interface's port group. */
export function vsphereCarriedTargets(spec: VSphereMachineSpec): CarriedTargets {
  return {
    imageRef: spec.template,
    ...(spec.datastore !== undefined ? { storage: (spec.disks ?? []).map(() => spec.datastore ?? '') } : {}),
    networks: (spec.network ?? []).map((n) => n.portGroup),
  };
}

/** The template (held to templates by the clone itself too) and where the spec places the clone, by name. */
export function vsphereNamedTargets(spec: VSphereMachineSpec): NamedTarget[] {
  return [
    ...namedTarget('spec.template', [IMAGE_KIND], spec.template),
    ...namedTarget('spec.datacenter', ['datacenter'], spec.datacenter),
    ...namedTarget('spec.cluster', ['cluster'], spec.cluster),
    // `Resources` is every cluster's root pool, which the failure domain's raw resourcePool names too.
    ...namedTarget('spec.resourcePool', ['resourcePool'], spec.resourcePool === 'Resources' ? undefined : spec.resourcePool),
    ...namedTarget('spec.folder', ['folder'], spec.folder),
    ...namedTarget('spec.datastore', ['datastore', 'datastoreCluster'], spec.datastore),
    ...(spec.network ?? []).flatMap((n, i) => namedTarget(`spec.network[${i}].portGroup`, ['portGroup', 'distributedPortGroup'], n.portGroup)),
  ];
}
