import { Ipam, MacAddress } from '../../addressing.js';
import { InterfaceName } from '../../names.js';
import type { ObjectOf } from '../../kind.js';
import { ListMap, SizeGiB, StringEnum, Type, type Static } from '../../schema.js';
import { fixedField, fixedListEntries, growOnlySize } from './fixed-once-created.js';
import { defineClusterKinds } from './infra-cluster.js';
import { defineMachineKinds, machineSpecFields, machineSpecValidations, machineStatusFields } from './infra-machine.js';
import { defineBackendApi } from '../../backend-api.js';
import { stringVariable } from '../../../clusterctl/template-variables.js';

export const CloudHypervisorMachineSpec = Type.Object(
  {
    ...machineSpecFields('cloudhypervisor://<UUID>'),
    bootSource: Type.Object(
      {
        kind: StringEnum(['image', 'installMedia'] as const, {
          description: 'image: copy a disk image as the OS disk; installMedia: boot an installer.',
        }),
        image: Type.String({ description: 'Image name or path on the host.', minLength: 1, maxLength: 1024 }),
      },
      { description: 'What the OS disk starts from.' },
    ),
    cpus: Type.Object(
      {
        boot: Type.Integer({ description: 'vCPUs at boot.', minimum: 1, maximum: 256 }),
        max: Type.Optional(Type.Integer({ description: 'Maximum vCPUs (hot-plug); boot when unset.', minimum: 1, maximum: 256 })),
      },
      {
        description: 'vCPUs.',
        'x-kubernetes-validations': [{ rule: '!has(self.max) || self.max >= self.boot', message: 'max must be at least boot', fieldPath: '.max' }],
      },
    ),
    memory: Type.Object(
      {
        sizeMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128, maximum: 4194304 }),
        hugepages: Type.Optional(Type.Boolean({ description: 'Back guest memory with huge pages.' })),
      },
      { description: 'Memory.' },
    ),
    osDiskSizeGiB: SizeGiB('OS disk size in GiB.'),
    storageClass: Type.String({ description: 'Host-declared storage class for the disks.', minLength: 1, maxLength: 63 }),
    nics: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: InterfaceName('Interface name in the guest (a Linux interface name).'),
            networkClass: Type.String({ description: 'Host-declared network class (a bridge).', minLength: 1, maxLength: 63 }),
            macAddress: Type.Optional(MacAddress()),
            ipam: Type.Optional(Ipam),
          },
          { description: 'A network interface (a tap on the class bridge).' },
        ),
        ['name'],
        { description: 'Network interfaces, in order.', maxItems: 16 },
      ),
    ),
  },
  { description: 'Desired state of the Cloud Hypervisor VM.', ...machineSpecValidations() },
);

export const CloudHypervisorMachineStatus = Type.Object(
  {
    ...machineStatusFields,
    hostUid: Type.Optional(Type.String({ description: 'Identity of the host running the VMM.' })),
    addressSource: Type.Optional(StringEnum(['static', 'neighbour'] as const, { description: 'Where status.addresses came from.' })),
    lastVmmExit: Type.Optional(
      Type.String({ description: 'When the VMM last exited without banlieue stopping it, and what the provider did about it.', maxLength: 1024 }),
    ),
  },
  { description: 'Observed state of the Cloud Hypervisor VM.' },
);

export const { machine: CloudHypervisorMachineKind, template: CloudHypervisorMachineTemplateKind } = defineMachineKinds({
  kind: 'CloudHypervisorMachine',
  nicsField: 'nics',
  shortName: 'bchm',
  backend: 'Cloud Hypervisor',
  spec: CloudHypervisorMachineSpec,
  status: CloudHypervisorMachineStatus,
  fixedOnceCreated: [
    fixedField('bootSource', 'boot source of a VM'),
    fixedField('storageClass', 'storage class of a VM'),
    fixedListEntries('nics', ['networkClass'], 'network interfaces and their network classes'),
    growOnlySize('osDiskSizeGiB'),
  ],
  extraColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.bootSource.image', priority: 1 }],
});

export type CloudHypervisorMachineSpec = Static<typeof CloudHypervisorMachineSpec>;
export type CloudHypervisorMachineStatus = Static<typeof CloudHypervisorMachineStatus>;
export type CloudHypervisorMachine = ObjectOf<typeof CloudHypervisorMachineKind>;
export type CloudHypervisorMachineTemplate = ObjectOf<typeof CloudHypervisorMachineTemplateKind>;

export const { cluster: CloudHypervisorClusterKind, template: CloudHypervisorClusterTemplateKind } = defineClusterKinds(
  'CloudHypervisor',
  'bchc',
  'Cloud Hypervisor',
);

const CLOUD_HYPERVISOR_IMAGE = stringVariable({
  name: 'CLOUD_HYPERVISOR_IMAGE',
  description: 'Disk image (name or path on the host) copied as the OS disk.',
  sample: 'ubuntu-2404-kube-v1.34.1.raw',
});
const CLOUD_HYPERVISOR_STORAGE_CLASS = stringVariable({
  name: 'CLOUD_HYPERVISOR_STORAGE_CLASS',
  description: 'Host-declared storage class for the disks.',
  sample: 'local',
});
const CLOUD_HYPERVISOR_NETWORK_CLASS = stringVariable({
  name: 'CLOUD_HYPERVISOR_NETWORK_CLASS',
  description: "Host-declared network class (bridge) of the machines' one NIC (DHCP).",
  sample: 'lan',
});

export const cloudHypervisorApi = defineBackendApi({
  name: 'cloud-hypervisor',
  title: 'Cloud Hypervisor',
  instance: 'a Cloud Hypervisor host',
  providerIDScheme: 'cloudhypervisor',
  machine: CloudHypervisorMachineKind,
  machineTemplate: CloudHypervisorMachineTemplateKind,
  cluster: CloudHypervisorClusterKind,
  clusterTemplate: CloudHypervisorClusterTemplateKind,
  providerRuns: 'host',
  providerRoleBuilt: true,
  egressPorts: [],
  endpoint: { schemes: [{ scheme: 'unix' }], example: 'unix:///run/banlieue (directory of the VMM sockets on the host)', insecureSkipTLSVerify: false },
  // The provider role runs on the host it drives (docs/adr/0017): no Secret.
  credentials: { secret: 'forbidden', keys: [] },
  classTargetKeys: ['path', 'bridge'],
  targetKinds: [],
  imageSources: { BackingFile: { ref: 'image path' }, Url: { ref: 'image to download' } },
  clusterctl: {
    flavor: 'cloud-hypervisor',
    machineSpec: (shape, v): CloudHypervisorMachineSpec => ({
      bootSource: { kind: 'image', image: v.str(CLOUD_HYPERVISOR_IMAGE) },
      cpus: { boot: shape.cpus },
      memory: { sizeMiB: shape.memoryMiB },
      osDiskSizeGiB: shape.osDiskGiB,
      storageClass: v.str(CLOUD_HYPERVISOR_STORAGE_CLASS),
      nics: [{ name: 'eth0', networkClass: v.str(CLOUD_HYPERVISOR_NETWORK_CLASS) }],
    }),
  },
});
