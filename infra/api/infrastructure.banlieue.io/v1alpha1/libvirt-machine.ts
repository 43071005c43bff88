import { FirmwareField } from '../../machine-fields.js';
import { Ipam, MacAddress } from '../../addressing.js';
import { InterfaceName } from '../../names.js';
import type { ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, StringEnum, Type, type Static } from '../../schema.js';
import { fixedField, fixedListEntries, growOnlyListSizes } from './fixed-once-created.js';
import { defineClusterKinds } from './infra-cluster.js';
import { defineMachineKinds, machineSpecFields, machineSpecValidations, machineStatusFields } from './infra-machine.js';
import { defineBackendApi, type EndpointScheme } from '../../backend-api.js';
import { stringVariable } from '../../../clusterctl/template-variables.js';

/**
 * libvirt names files after the domain (/etc/libvirt/qemu/<name>.xml, its QEMU
 * log, our <name>-console.log); at 243 characters a real QEMU host can no longer
 * start it, at 250 it cannot define it (file names of 255 bytes). 200 leaves
 * room for the suffixes of features not used today (swtpm, nvram).
 */
export const LIBVIRT_MAX_DOMAIN_NAME_LENGTH = 200;

/**
 * A pool, network or bridge name as it reaches libvirt's XML and RPCs: letters, digits and
 * `._:+-`, not starting with a punctuation character (no path, no option-like `-x`).
 */
export const LIBVIRT_OBJECT_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:+-]*$';
/** A volume, or `<pool>/<volume>`, each part of the same grammar (no other `/`: no path). */
export const LIBVIRT_VOLUME_REF_PATTERN = '^([A-Za-z0-9][A-Za-z0-9._:+-]*/)?[A-Za-z0-9][A-Za-z0-9._:+-]*$';

export const LibvirtMachineSpec = Type.Object(
  {
    ...machineSpecFields('libvirt://<domain UUID>'),
    domainName: Type.Optional(
      Type.String({
        description: `libvirt domain name; <namespace>-<name> when unset (beyond ${LIBVIRT_MAX_DOMAIN_NAME_LENGTH} characters, cut and ended by a hash of it).`,
        minLength: 1,
        maxLength: LIBVIRT_MAX_DOMAIN_NAME_LENGTH,
        pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
      }),
    ),
    pool: Type.String({ description: 'Storage pool for the disks and the seed ISO.', minLength: 1, maxLength: 253, pattern: LIBVIRT_OBJECT_NAME_PATTERN }),
    bootSource: Type.Object(
      {
        kind: StringEnum(['backingVolume', 'installMedia'] as const, {
          description: 'backingVolume: the OS disk is a qcow2 overlay on this volume; installMedia: boot an installer ISO.',
        }),
        volume: Type.String({
          description: "Volume name in spec.pool, or <pool>/<volume> for a volume in another pool of the host; an image's, never a machine's (<uuid>-…).",
          minLength: 1,
          maxLength: 253,
          pattern: LIBVIRT_VOLUME_REF_PATTERN,
          'x-kubernetes-validations': [
            {
              rule: "!self.matches('^([^/]+/)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}-')",
              message: "names a machine's disk (<uuid>-…): a machine starts from an image volume, never from another machine's",
            },
          ],
        }),
      },
      { description: 'What the OS disk starts from.' },
    ),
    vcpus: Type.Integer({ description: 'Virtual CPUs.', minimum: 1, maximum: 256 }),
    memoryMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128, maximum: 4194304 }),
    firmware: Type.Optional(FirmwareField()),
    machineType: Type.Optional(Type.String({ description: 'QEMU machine type, e.g. q35.', maxLength: 64 })),
    disks: ListMap(
      Type.Object(
        {
          name: Name('Disk name.', { maxLength: 63 }),
          sizeGiB: SizeGiB('Size in GiB.'),
          bus: Type.Optional(StringEnum(['virtio', 'scsi', 'sata'] as const, { description: 'Disk bus.', default: 'virtio' })),
        },
        { description: 'A disk.' },
      ),
      ['name'],
      { description: 'Disks; the first is the OS disk.', minItems: 1, maxItems: 32 },
    ),
    network: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: InterfaceName('Interface name in the guest (a Linux interface name).'),
            source: Type.Object(
              {
                kind: StringEnum(['network', 'bridge'] as const, { description: 'A libvirt network or a host bridge.' }),
                name: Type.String({ description: 'Network or bridge name.', minLength: 1, maxLength: 253, pattern: LIBVIRT_OBJECT_NAME_PATTERN }),
              },
              { description: 'Where the interface is plugged.' },
            ),
            model: Type.Optional(Type.String({ description: 'NIC model.', default: 'virtio', maxLength: 32 })),
            macAddress: Type.Optional(MacAddress()),
            ipam: Type.Optional(Ipam),
          },
          { description: 'A network interface.' },
        ),
        ['name'],
        { description: 'Network interfaces, in order.', maxItems: 16 },
      ),
    ),
  },
  { description: 'Desired state of the libvirt domain.', ...machineSpecValidations() },
);

export const LibvirtMachineStatus = Type.Object(
  {
    ...machineStatusFields,
    domainUuid: Type.Optional(Type.String({ description: 'UUID of the libvirt domain.' })),
    addressSource: Type.Optional(StringEnum(['guestAgent', 'dhcpLease', 'arpTable', 'static'] as const, { description: 'Where status.addresses came from.' })),
  },
  { description: 'Observed state of the libvirt domain.' },
);

export const { machine: LibvirtMachineKind, template: LibvirtMachineTemplateKind } = defineMachineKinds({
  kind: 'LibvirtMachine',
  nicsField: 'network',
  shortName: 'blvirtm',
  backend: 'libvirt',
  spec: LibvirtMachineSpec,
  status: LibvirtMachineStatus,
  fixedOnceCreated: [
    fixedField('domainName', 'domain name of a VM'),
    fixedField('pool', 'storage pool of a VM'),
    fixedField('bootSource', 'boot source of a VM'),
    fixedField('firmware', 'firmware of a VM'),
    fixedField('machineType', 'machine type of a VM'),
    fixedListEntries('network', ['source.kind', 'source.name', 'model'], 'network interfaces, where they are plugged and their models'),
    fixedListEntries('disks', ['bus'], 'disks and their buses'),
    growOnlyListSizes('disks', 'sizeGiB'),
  ],
  extraColumns: [{ name: 'Domain', type: 'string', jsonPath: '.spec.domainName', priority: 1 }],
});

export type LibvirtMachineSpec = Static<typeof LibvirtMachineSpec>;
export type LibvirtMachineStatus = Static<typeof LibvirtMachineStatus>;
export type LibvirtMachine = ObjectOf<typeof LibvirtMachineKind>;
export type LibvirtMachineTemplate = ObjectOf<typeof LibvirtMachineTemplateKind>;

export const { cluster: LibvirtClusterKind, template: LibvirtClusterTemplateKind } = defineClusterKinds('Libvirt', 'blvirtc', 'libvirt');

/** `spec.libvirt` of a libvirt Provider. */
export const LibvirtProviderSettings = Type.Object(
  {
    domainType: Type.Optional(
      StringEnum(['kvm', 'qemu'] as const, {
        description: 'The <domain type> of the machines this host runs: kvm (hardware virtualisation) or qemu (TCG emulation, for hosts without usable KVM).',
        default: 'kvm',
      }),
    ),
  },
  { description: 'Settings of a libvirt host; only for providerClassRef libvirt.' },
);

/** libvirt's transports, the ports their daemons listen on (none for the unix socket), and tcp's lack of TLS. */
const TRANSPORT_PORTS: readonly (readonly [string, number | undefined, 'unprotected'?])[] = [
  ['tls', 16514],
  ['tcp', 16509, 'unprotected'],
  ['ssh', 22],
  ['unix', undefined],
];

/** `<driver>+<transport>` for each transport: qemu is the hypervisor, test libvirt's test driver (a simulated host). */
const driverSchemes = (driver: string, onlyFor?: string): EndpointScheme[] =>
  TRANSPORT_PORTS.map(([transport, port, unprotected]) => ({
    scheme: `${driver}+${transport}`,
    ...(port === undefined ? {} : { defaultPort: port }),
    ...(onlyFor === undefined ? {} : { onlyFor }),
    ...(unprotected ? { unprotected: true as const } : {}),
  }));

const LIBVIRT_POOL = stringVariable({
  name: 'LIBVIRT_POOL',
  description: 'Storage pool for the disks and the seed ISO.',
  default: 'default',
  sample: 'default',
});
const LIBVIRT_BASE_VOLUME = stringVariable({
  name: 'LIBVIRT_BASE_VOLUME',
  description: 'qcow2 volume in the pool the OS disk is an overlay of.',
  sample: 'ubuntu-2404-kube-v1.34.1.qcow2',
});
const LIBVIRT_NETWORK = stringVariable({
  name: 'LIBVIRT_NETWORK',
  description: "libvirt network of the machines' one NIC (DHCP).",
  default: 'default',
  sample: 'default',
});

export const libvirtApi = defineBackendApi({
  name: 'libvirt',
  title: 'libvirt',
  instance: 'a libvirt host',
  providerIDScheme: 'libvirt',
  machine: LibvirtMachineKind,
  machineTemplate: LibvirtMachineTemplateKind,
  cluster: LibvirtClusterKind,
  clusterTemplate: LibvirtClusterTemplateKind,
  providerRuns: 'cluster',
  providerRoleBuilt: true,
  egressPorts: [16514, 16509, 22],
  endpoint: {
    schemes: [...driverSchemes('qemu'), ...driverSchemes('test', "libvirt's test driver")],
    example: 'qemu+tls://host/system, qemu+tcp://, qemu+ssh://user@host/system or qemu+unix:///system',
    insecureSkipTLSVerify: false,
  },
  // The keys depend on the endpoint's transport, checked before dialling (controller/backends/libvirt/credentials.ts).
  credentials: { secret: 'required', keys: [], description: 'tls.crt, tls.key (or ssh-privatekey)' },
  classTargetKeys: ['pool', 'network'],
  targetKinds: ['image', 'pool', 'network', 'bridge'],
  imageSources: { BackingFile: { ref: 'volume already in a pool' } },
  providerSettings: LibvirtProviderSettings,
  clusterctl: {
    flavor: 'libvirt',
    machineSpec: (shape, v): LibvirtMachineSpec => ({
      pool: v.str(LIBVIRT_POOL),
      bootSource: { kind: 'backingVolume', volume: v.str(LIBVIRT_BASE_VOLUME) },
      vcpus: shape.cpus,
      memoryMiB: shape.memoryMiB,
      disks: [{ name: 'os', sizeGiB: shape.osDiskGiB }],
      network: [{ name: 'eth0', source: { kind: 'network', name: v.str(LIBVIRT_NETWORK) } }],
    }),
  },
});
