import { DISK_PROVISIONINGS, FirmwareField } from '../../machine-fields.js';
import { Ipam, MacAddress } from '../../addressing.js';
import { InterfaceName } from '../../names.js';
import type { ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, StringEnum, Type, type Static } from '../../schema.js';
import { fixedField, fixedListEntries, growOnlyListSizes } from './fixed-once-created.js';
import { defineClusterKinds } from './infra-cluster.js';
import { defineMachineKinds, machineSpecFields, machineSpecValidations, machineStatusFields } from './infra-machine.js';
import { defineBackendApi } from '../../backend-api.js';
import { stringVariable } from '../../../clusterctl/template-variables.js';

export const VSphereMachineSpec = Type.Object(
  {
    ...machineSpecFields('vsphere://<BIOS UUID>'),
    template: Type.String({
      description:
        'VM template to clone: a name, `<datacenter>/<name>` or an inventory path. A VM that is not a template only where the Provider sets spec.vsphere.allowCloneFromVirtualMachines.',
      minLength: 1,
      maxLength: 1024,
    }),
    templateFolder: Type.Optional(Type.String({ description: 'Inventory folder that holds the template.', maxLength: 1024 })),
    datacenter: Type.Optional(Type.String({ description: 'Datacenter; from the failure domain raw attributes when unset.', maxLength: 256 })),
    cluster: Type.Optional(Type.String({ description: 'Compute cluster; from the failure domain raw attributes when unset.', maxLength: 256 })),
    resourcePool: Type.Optional(Type.String({ description: 'Resource pool; the cluster root pool when unset.', maxLength: 1024 })),
    folder: Type.Optional(Type.String({ description: 'VM folder; the datacenter VM folder when unset.', maxLength: 1024 })),
    datastore: Type.Optional(
      Type.String({ description: 'Datastore (or datastore cluster) for the disks; the template datastore when unset.', maxLength: 256 }),
    ),
    numCpus: Type.Integer({ description: 'Virtual CPUs.', minimum: 1, maximum: 256 }),
    // vSphere refuses memory that is not a multiple of 4 MiB: refused here, with the field named.
    memoryMiB: Type.Integer({ description: 'Memory in MiB; a multiple of 4, as vSphere requires.', minimum: 128, maximum: 4194304, multipleOf: 4 }),
    firmware: Type.Optional(FirmwareField()),
    disks: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: Name('Disk name.', { maxLength: 63 }),
            sizeGiB: SizeGiB('Size in GiB; the first disk is the template OS disk, grown to this size if smaller.'),
            provisioning: Type.Optional(StringEnum(DISK_PROVISIONINGS, { description: 'thin, thick or eagerZeroed.', default: 'thin' })),
          },
          { description: 'A disk.' },
        ),
        ['name'],
        { description: 'Disks; the first is the OS disk from the template.', maxItems: 32 },
      ),
    ),
    network: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: InterfaceName('Interface name in the guest (a Linux interface name).'),
            portGroup: Type.String({ description: 'Standard or distributed port group name.', minLength: 1, maxLength: 256 }),
            macAddress: Type.Optional(MacAddress()),
            ipam: Type.Optional(Ipam),
          },
          { description: 'A network interface.' },
        ),
        ['name'],
        { description: 'Network interfaces, in order; they replace the template NICs.', maxItems: 10 },
      ),
    ),
  },
  { description: 'Desired state of the vSphere VM.', ...machineSpecValidations() },
);

export const VSphereMachineStatus = Type.Object(
  {
    ...machineStatusFields,
    vmRef: Type.Optional(Type.String({ description: 'Managed object reference of the VM (e.g. vm-42).' })),
    biosUuid: Type.Optional(Type.String({ description: 'BIOS UUID (config.uuid) of the VM.' })),
  },
  { description: 'Observed state of the vSphere VM.' },
);

/** vCenter's longest VM name; the VM is named after the machine. */
export const VSPHERE_MAX_VM_NAME_LENGTH = 80;

export const { machine: VSphereMachineKind, template: VSphereMachineTemplateKind } = defineMachineKinds({
  kind: 'VSphereMachine',
  nicsField: 'network',
  shortName: 'bvsm',
  backend: 'vSphere',
  spec: VSphereMachineSpec,
  status: VSphereMachineStatus,
  fixedOnceCreated: [
    fixedField('template', 'template a VM was cloned from'),
    fixedField('templateFolder', 'template a VM was cloned from'),
    fixedField('datacenter', 'datacenter of a VM'),
    fixedField('cluster', 'compute cluster of a VM'),
    fixedField('resourcePool', 'resource pool of a VM'),
    fixedField('folder', 'folder of a VM'),
    fixedField('datastore', 'datastore of a VM'),
    fixedField('firmware', 'firmware of a VM'),
    fixedListEntries('network', ['portGroup'], 'network interfaces and their port groups'),
    fixedListEntries('disks', ['provisioning'], 'disks and their provisioning'),
    growOnlyListSizes('disks', 'sizeGiB'),
  ],
  extraColumns: [{ name: 'vSphereCluster', type: 'string', jsonPath: '.spec.cluster', priority: 1 }],
  nameLimit: { maxLength: VSPHERE_MAX_VM_NAME_LENGTH, refusedBy: 'vCenter' },
});

export type VSphereMachineSpec = Static<typeof VSphereMachineSpec>;
export type VSphereMachineStatus = Static<typeof VSphereMachineStatus>;
export type VSphereMachine = ObjectOf<typeof VSphereMachineKind>;
export type VSphereMachineTemplate = ObjectOf<typeof VSphereMachineTemplateKind>;

export const { cluster: VSphereClusterKind, template: VSphereClusterTemplateKind } = defineClusterKinds('VSphere', 'bvsc', 'vSphere');

/** `spec.vsphere` of a vSphere Provider. */
export const VsphereProviderSettings = Type.Object(
  {
    // A tenant naming a running VM as its template would boot a copy of that VM's disks with user-data of its own.
    allowCloneFromVirtualMachines: Type.Optional(
      Type.Boolean({
        description:
          "Let machines clone a VM that is not a template (spec.template, a VMImage source), as Cluster API Provider vSphere does: a copy of that VM's disks then boots with the machine's user-data, so whoever may create machines on this Provider gets the data of every VM its credentials reach. Off: only VM templates are cloned.",
        default: false,
      }),
    ),
  },
  { description: 'Settings of a vCenter; only for providerClassRef vsphere.' },
);

const VSPHERE_TEMPLATE = stringVariable({
  name: 'VSPHERE_TEMPLATE',
  description: 'VM template to clone, present under this name in every vCenter of the cluster.',
  sample: 'ubuntu-2404-kube-v1.34.1',
});
const VSPHERE_NETWORK = stringVariable({ name: 'VSPHERE_NETWORK', description: "Port group of the machines' one NIC (DHCP).", sample: 'VM Network' });

export const vsphereApi = defineBackendApi({
  name: 'vsphere',
  title: 'vSphere',
  instance: 'a vCenter',
  providerIDScheme: 'vsphere',
  machine: VSphereMachineKind,
  machineTemplate: VSphereMachineTemplateKind,
  cluster: VSphereClusterKind,
  clusterTemplate: VSphereClusterTemplateKind,
  providerRuns: 'cluster',
  providerRoleBuilt: true,
  egressPorts: [443],
  endpoint: { schemes: [{ scheme: 'https', defaultPort: 443 }], example: 'https://vcenter/sdk', insecureSkipTLSVerify: true },
  credentials: { secret: 'required', keys: ['username', 'password'] },
  classTargetKeys: ['datastore', 'datastoreCluster', 'portGroup', 'distributedPortGroup'],
  targetKinds: ['image', 'datacenter', 'cluster', 'resourcePool', 'folder', 'datastore', 'datastoreCluster', 'portGroup', 'distributedPortGroup'],
  imageSources: { Template: { ref: 'template name' } },
  providerSettings: VsphereProviderSettings,
  virtualMachineFolder: 'VM folder; defaults to the datacenter VM folder',
  // The default flavor: vSphere is the backend `clusterctl generate cluster` assumes without --flavor.
  clusterctl: {
    flavor: '',
    machineSpec: (shape, v): VSphereMachineSpec => ({
      template: v.str(VSPHERE_TEMPLATE),
      numCpus: shape.cpus,
      memoryMiB: shape.memoryMiB,
      disks: [{ name: 'os', sizeGiB: shape.osDiskGiB }],
      network: [{ name: 'eth0', portGroup: v.str(VSPHERE_NETWORK) }],
    }),
  },
});
