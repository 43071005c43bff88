import { FirmwareField } from '../../machine-fields.js';
import { Ipam, MacAddress } from '../../addressing.js';
import { InterfaceName } from '../../names.js';
import type { ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, StringEnum, Type, type Static } from '../../schema.js';
import { fixedField, fixedListEntries, growOnlyListSizes, growOnlySize } from './fixed-once-created.js';
import { defineClusterKinds } from './infra-cluster.js';
import { defineMachineKinds, machineSpecFields, machineSpecValidations, machineStatusFields } from './infra-machine.js';
import { defineBackendApi } from '../../backend-api.js';
import { integerVariable, stringVariable } from '../../../clusterctl/template-variables.js';

/**
 * PVE's own formats for the identifiers a ProxmoxMachine hands it (pve-common
 * PVE::JSONSchema: pve-storage-id, pve-bridge-id, pve-poolid, pve-node), so that
 * a value PVE refuses is refused here, naming the field, instead of reaching a
 * clone or config call. ASCII only: Linux bridges and
 * SDN vnets are interface names.
 */
const PVE_STORAGE_ID_PATTERN = '^[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]$';
const PVE_BRIDGE_ID_PATTERN = '^[A-Za-z0-9_.-]+$';
const PVE_POOL_ID_PATTERN = '^[A-Za-z0-9_/-]+$';
const PVE_NODE_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?$';

const StorageId = (description: string): ReturnType<typeof Type.String> => Type.String({ description, maxLength: 64, pattern: PVE_STORAGE_ID_PATTERN });

export const ProxmoxMachineSpec = Type.Object(
  {
    ...machineSpecFields('proxmox://<SMBIOS UUID>'),
    node: Type.Optional(
      Type.String({ description: 'Proxmox node to run on; from the failure domain raw attributes when unset.', maxLength: 64, pattern: PVE_NODE_PATTERN }),
    ),
    templateVmid: Type.Integer({ description: 'VMID of the template to clone.', minimum: 100, maximum: 999999999 }),
    cloneMode: Type.Optional(
      StringEnum(['Full', 'Linked'] as const, {
        description:
          "Full: the disks are copied to spec.storage. Linked: they share the template's base volumes (copy-on-write, on the template's storage; spec.storage is unused).",
        default: 'Full',
      }),
    ),
    storage: Type.Optional(StorageId('Storage for the cloned disks; the template storage when unset.')),
    pool: Type.Optional(Type.String({ description: 'Proxmox resource pool to add the VM to.', maxLength: 64, pattern: PVE_POOL_ID_PATTERN })),
    cores: Type.Integer({ description: 'CPU cores per socket.', minimum: 1, maximum: 512 }),
    sockets: Type.Optional(Type.Integer({ description: 'CPU sockets.', minimum: 1, maximum: 16, default: 1 })),
    cpuType: Type.Optional(
      Type.String({
        description: 'QEMU CPU type, e.g. host or x86-64-v2-AES (letters, digits and ._+-: one value of the cpu property string).',
        maxLength: 64,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._+-]*$',
      }),
    ),
    memoryMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128, maximum: 4194304 }),
    firmware: Type.Optional(FirmwareField()),
    osDiskSizeGiB: SizeGiB('OS disk (scsi0) size; grown if the template disk is smaller, never shrunk.'),
    dataDisks: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: Name('Disk name.', { maxLength: 63 }),
            sizeGiB: SizeGiB('Size in GiB.'),
            storage: Type.Optional(StorageId('Storage; spec.storage when unset.')),
            iothread: Type.Optional(Type.Boolean({ description: 'Give the disk its own I/O thread.' })),
            discard: Type.Optional(Type.Boolean({ description: 'Pass discard/trim to the storage.' })),
            ssd: Type.Optional(Type.Boolean({ description: 'Present the disk as an SSD.' })),
          },
          { description: 'A data disk (scsi1 onwards).' },
        ),
        ['name'],
        { description: 'Data disks.', maxItems: 30 },
      ),
    ),
    nics: ListMap(
      Type.Object(
        {
          name: InterfaceName('Interface name in the guest (a Linux interface name).'),
          bridge: Type.String({ description: 'Linux bridge or SDN vnet, e.g. vmbr0.', minLength: 1, maxLength: 64, pattern: PVE_BRIDGE_ID_PATTERN }),
          vlan: Type.Optional(Type.Integer({ description: 'VLAN tag.', minimum: 1, maximum: 4094 })),
          model: Type.Optional(StringEnum(['virtio', 'e1000', 'rtl8139', 'vmxnet3'] as const, { description: 'NIC model.', default: 'virtio' })),
          macAddress: Type.Optional(MacAddress()),
          ipam: Type.Optional(Ipam),
        },
        { description: 'A network interface (netN).' },
      ),
      ['name'],
      { description: 'Network interfaces, in order (net0, net1, ...).', minItems: 1, maxItems: 16 },
    ),
    isoStorage: Type.Optional(StorageId('Storage (with iso content) for the cloud-init seed ISO.')),
  },
  {
    description: 'Desired state of the Proxmox VM.',
    'x-kubernetes-validations': [
      ...machineSpecValidations()['x-kubernetes-validations'],
      {
        rule: '!self.nics.exists(n, has(n.ipam) && has(n.ipam.static)) || has(self.isoStorage)',
        message: 'isoStorage is required when a NIC has a static address (the seed ISO carries it)',
        fieldPath: '.isoStorage',
      },
    ],
  },
);

export const ProxmoxMachineStatus = Type.Object(
  {
    ...machineStatusFields,
    node: Type.Optional(Type.String({ description: 'Node the VM runs on.' })),
    vmid: Type.Optional(Type.Integer({ description: 'VMID of the VM.', minimum: 100, maximum: 999999999 })),
    addressSource: Type.Optional(StringEnum(['static', 'guestAgent'] as const, { description: 'Where status.addresses came from.' })),
  },
  { description: 'Observed state of the Proxmox VM.' },
);

export const { machine: ProxmoxMachineKind, template: ProxmoxMachineTemplateKind } = defineMachineKinds({
  kind: 'ProxmoxMachine',
  nicsField: 'nics',
  shortName: 'bpvem',
  backend: 'Proxmox VE',
  spec: ProxmoxMachineSpec,
  status: ProxmoxMachineStatus,
  fixedOnceCreated: [
    fixedField('node', 'node of a VM'),
    fixedField('templateVmid', 'template a VM was cloned from'),
    fixedField('cloneMode', 'clone mode of a VM'),
    fixedField('storage', 'storage of a VM'),
    fixedField('pool', 'resource pool of a VM'),
    fixedField('firmware', 'firmware of a VM'),
    fixedListEntries('nics', ['bridge', 'vlan', 'model'], 'network interfaces, their bridges, VLAN tags and models'),
    growOnlySize('osDiskSizeGiB'),
    fixedListEntries('dataDisks', ['storage', 'iothread', 'discard', 'ssd'], 'data disks, their storage and options'),
    growOnlyListSizes('dataDisks', 'sizeGiB'),
  ],
  extraColumns: [
    { name: 'Node', type: 'string', jsonPath: '.status.node' },
    { name: 'VMID', type: 'integer', jsonPath: '.status.vmid' },
  ],
});

export type ProxmoxMachineSpec = Static<typeof ProxmoxMachineSpec>;
export type ProxmoxMachineStatus = Static<typeof ProxmoxMachineStatus>;
export type ProxmoxMachine = ObjectOf<typeof ProxmoxMachineKind>;
export type ProxmoxMachineTemplate = ObjectOf<typeof ProxmoxMachineTemplateKind>;

export const { cluster: ProxmoxClusterKind, template: ProxmoxClusterTemplateKind } = defineClusterKinds('Proxmox', 'bpvec', 'Proxmox VE');

const PROXMOX_TEMPLATE_VMID = integerVariable({
  name: 'PROXMOX_TEMPLATE_VMID',
  description: 'VMID of the template to clone, usable from every node (shared storage).',
  sample: 9000,
});
const PROXMOX_BRIDGE = stringVariable({ name: 'PROXMOX_BRIDGE', description: "Bridge of the machines' one NIC (DHCP).", default: 'vmbr0', sample: 'vmbr0' });
const PROXMOX_ISO_STORAGE = stringVariable({
  name: 'PROXMOX_ISO_STORAGE',
  description: 'Storage with `iso` content for the cloud-init seed ISO that carries the bootstrap data.',
  default: 'local',
  sample: 'local',
});

export const proxmoxApi = defineBackendApi({
  name: 'proxmox',
  title: 'Proxmox VE',
  instance: 'a Proxmox cluster',
  providerIDScheme: 'proxmox',
  machine: ProxmoxMachineKind,
  machineTemplate: ProxmoxMachineTemplateKind,
  cluster: ProxmoxClusterKind,
  clusterTemplate: ProxmoxClusterTemplateKind,
  providerRuns: 'cluster',
  providerRoleBuilt: true,
  egressPorts: [8006],
  endpoint: { schemes: [{ scheme: 'https', defaultPort: 443 }], example: 'https://pve:8006', insecureSkipTLSVerify: true },
  // An API token, never a password (controller/backends/proxmox/client/credentials.ts reads these keys).
  credentials: { secret: 'required', keys: ['tokenID', 'tokenSecret'], description: 'tokenID (user@realm!tokenname), tokenSecret' },
  classTargetKeys: ['storage', 'bridge'],
  targetKinds: ['image', 'node', 'storage', 'pool', 'bridge', 'vlan'],
  imageSources: {
    Template: { ref: 'template VMID', refPattern: { regex: '^[1-9][0-9]{2,8}$', means: 'a VMID (100-999999999)' }, cloneModes: true },
  },
  clusterctl: {
    flavor: 'proxmox',
    machineSpec: (shape, v): ProxmoxMachineSpec => ({
      templateVmid: v.int(PROXMOX_TEMPLATE_VMID),
      cores: shape.cpus,
      memoryMiB: shape.memoryMiB,
      osDiskSizeGiB: shape.osDiskGiB,
      nics: [{ name: 'eth0', bridge: v.str(PROXMOX_BRIDGE) }],
      isoStorage: v.str(PROXMOX_ISO_STORAGE),
    }),
  },
});
