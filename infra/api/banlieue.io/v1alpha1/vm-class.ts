import { ClassIpam } from '../../addressing.js';
import { DISK_PROVISIONINGS, FirmwareField } from '../../machine-fields.js';
import { InterfaceName } from '../../names.js';
import { API_VERSION, CORE_GROUP, defineKind, type ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, StringEnum, Type, type Static } from '../../schema.js';
import { Features } from './provider.js';

export const ClassDisk = Type.Object(
  {
    name: Name('Disk name, unique in the class; overrides refer to it.', { maxLength: 63 }),
    sizeGiB: SizeGiB('Size in GiB. For the first (OS) disk, a minimum: the image may be larger.'),
    storageClass: Name('Storage class (offered by a Provider in capabilities.storageClasses).', { maxLength: 63 }),
    provisioning: Type.Optional(StringEnum(DISK_PROVISIONINGS, { description: 'Disk provisioning: thin, thick or eagerZeroed.', default: 'thin' })),
  },
  { description: 'A disk. The first disk is the OS disk, backed by the image.' },
);
export type ClassDisk = Static<typeof ClassDisk>;

export const ClassInterface = Type.Object(
  {
    name: InterfaceName('Interface name in the guest (a Linux interface name, at most 15 characters), unique in the class; networkOverrides refer to it.'),
    networkClass: Name('Network class (offered by a Provider in capabilities.networkClasses).', { maxLength: 63 }),
    ipam: Type.Optional(ClassIpam),
    mtu: Type.Optional(Type.Integer({ description: 'MTU of the interface.', minimum: 576, maximum: 9216 })),
  },
  { description: 'A network interface.' },
);
export type ClassInterface = Static<typeof ClassInterface>;

export const VMClassSpec = Type.Object(
  {
    hardware: Type.Object(
      {
        cpus: Type.Integer({ description: 'Virtual CPUs.', minimum: 1, maximum: 256 }),
        memoryMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128, maximum: 4194304 }),
        disks: ListMap(ClassDisk, ['name'], { description: 'Disks; the first is the OS disk.', minItems: 1, maxItems: 32 }),
      },
      { description: 'CPU, memory and disks.' },
    ),
    network: Type.Object(
      {
        interfaces: ListMap(ClassInterface, ['name'], {
          description: 'Network interfaces, in order.',
          minItems: 1,
          maxItems: 16,
        }),
      },
      { description: 'Network interfaces.' },
    ),
    firmware: Type.Optional(FirmwareField()),
    features: Type.Optional(Features('Features every failure domain must offer for this class.')),
  },
  { description: 'Shape of a VirtualMachine: hardware, network, firmware and required features.' },
);

export const VMClassKind = defineKind({
  group: CORE_GROUP,
  version: API_VERSION,
  kind: 'VMClass',
  plural: 'vmclasses',
  shortNames: ['bvmc'],
  scope: 'Cluster',
  categories: ['banlieue'],
  description: 'A VMClass is a reusable VM shape (CPU, memory, disks, interfaces, firmware) independent of any backend.',
  spec: VMClassSpec,
  status: undefined,
  printerColumns: [
    { name: 'CPUs', type: 'integer', jsonPath: '.spec.hardware.cpus' },
    { name: 'MemoryMiB', type: 'integer', jsonPath: '.spec.hardware.memoryMiB' },
    { name: 'Firmware', type: 'string', jsonPath: '.spec.firmware' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  capiContract: false,
});

export type VMClassSpec = Static<typeof VMClassSpec>;
export type VMClass = ObjectOf<typeof VMClassKind>;
