// The API as the real kube-apiserver enforces it: every example is accepted,
// and invalid objects are refused with a message that names the field.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BanlieueValidator } from '../../infra/api/validator.js';
import { apiMessage, createNamespace, objectApi } from '../support/kube.js';

type Obj = KubernetesObject & { spec?: Record<string, unknown>; [k: string]: unknown };

const CORE = 'banlieue.io/v1alpha1';
const INFRA = 'infrastructure.banlieue.io/v1alpha1';

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return p.endsWith('.yaml') ? [p] : [];
  });
}

const validator = new BanlieueValidator();
const exampleDocs = yamlFiles('examples').flatMap((file) =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => !!o && !!o.apiVersion && !!o.kind && validator.handles(o.apiVersion, o.kind))
    .map((o) => [`${file}: ${o.kind} ${o.metadata?.name ?? ''}`, o] as const),
);

const clone = <T>(v: T): T => structuredClone(v);

// Minimal valid objects; each invalid case changes one thing.
const base = {
  vm: (): Obj => ({
    apiVersion: CORE,
    kind: 'VirtualMachine',
    metadata: { name: 'vm' },
    spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' } },
  }),
  provider: (backend = 'vsphere', endpoint = 'https://vc.example.com/sdk'): Obj => ({
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name: 'prov' },
    spec: { providerClassRef: { name: backend }, connection: { endpoint, credentialsRef: { name: 'creds' } } },
  }),
  vmClass: (): Obj => ({
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name: 'cls' },
    spec: {
      hardware: { cpus: 2, memoryMiB: 2048, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] },
      network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
    },
  }),
  vmImage: (): Obj => ({
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: 'img' },
    spec: {
      osFamily: 'linux',
      osDistribution: 'ubuntu',
      osVersion: '24.04',
      architecture: 'amd64',
      sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu-24.04' }],
    },
  }),
  vsphereMachine: (): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachine',
    metadata: { name: 'vsm' },
    spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048 },
  }),
  proxmoxMachine: (): Obj => ({
    apiVersion: INFRA,
    kind: 'ProxmoxMachine',
    metadata: { name: 'pvem' },
    spec: { templateVmid: 9000, cores: 2, memoryMiB: 2048, osDiskSizeGiB: 20, nics: [{ name: 'net0', bridge: 'vmbr0' }] },
  }),
  libvirtMachine: (): Obj => ({
    apiVersion: INFRA,
    kind: 'LibvirtMachine',
    metadata: { name: 'lvm' },
    spec: {
      pool: 'default',
      bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
      vcpus: 2,
      memoryMiB: 2048,
      disks: [{ name: 'os', sizeGiB: 20 }],
    },
  }),
  chMachine: (): Obj => ({
    apiVersion: INFRA,
    kind: 'CloudHypervisorMachine',
    metadata: { name: 'chm' },
    spec: {
      bootSource: { kind: 'image', image: 'ubuntu.raw' },
      cpus: { boot: 2 },
      memory: { sizeMiB: 2048 },
      osDiskSizeGiB: 20,
      storageClass: 'local',
    },
  }),
  vsphereCluster: (): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereCluster',
    metadata: { name: 'vsc' },
    spec: { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 }, providerRefs: [{ name: 'vcenter-a' }] },
  }),
  vsphereMachineTemplate: (): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachineTemplate',
    metadata: { name: 'vsmt' },
    spec: { template: { spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048 } } },
  }),
};

type Mutate = (o: Obj) => void;
const spec = (o: Obj): Record<string, any> => o.spec as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** [description, base object, change, text the API server message must contain]. */
const createCases: [string, () => Obj, Mutate, string][] = [
  ['VM without classRef', base.vm, (o) => delete spec(o).classRef, 'spec.classRef: Required value'],
  ['VM with an unknown desiredPowerState', base.vm, (o) => (spec(o).desiredPowerState = 'On'), 'spec.desiredPowerState: Unsupported value'],
  ['VM with an unknown migrationPolicy', base.vm, (o) => (spec(o).migrationPolicy = 'sometimes'), 'spec.migrationPolicy: Unsupported value'],
  [
    'VM with two userData sources',
    base.vm,
    (o) => (spec(o).userData = { secretRef: { name: 'a' }, configMapRef: { name: 'b' } }),
    'spec.userData: Invalid value: exactly one of secretRef or configMapRef',
  ],
  ['VM with no userData source', base.vm, (o) => (spec(o).userData = {}), 'spec.userData: Invalid value'],
  ['VM with 0 CPUs', base.vm, (o) => (spec(o).hardwareOverride = { cpus: 0 }), 'spec.hardwareOverride.cpus'],
  ['VM with too little memory', base.vm, (o) => (spec(o).hardwareOverride = { memoryMiB: 64 }), 'spec.hardwareOverride.memoryMiB'],
  [
    'VM with a static address that is no IP',
    base.vm,
    (o) => (spec(o).networkOverrides = [{ name: 'eth0', static: { address: 'ten.0.0.1', prefix: 24 } }]),
    'spec.networkOverrides[0].static.address',
  ],
  [
    'VM with a prefix over 128',
    base.vm,
    (o) => (spec(o).networkOverrides = [{ name: 'eth0', static: { address: '192.0.2.5', prefix: 200 } }]),
    'spec.networkOverrides[0].static.prefix',
  ],
  [
    'VM with the same interface overridden twice',
    base.vm,
    (o) =>
      (spec(o).networkOverrides = [
        { name: 'eth0', static: { address: '192.0.2.5', prefix: 24 } },
        { name: 'eth0', static: { address: '192.0.2.6', prefix: 24 } },
      ]),
    'spec.networkOverrides[1]: Duplicate value',
  ],
  [
    'VM with a newline and a cloud-config key in a static domain',
    base.vm,
    (o) => (spec(o).networkOverrides = [{ name: 'eth0', static: { address: '192.0.2.5', prefix: 24, domain: 'lab.example\nruncmd: [reboot]' } }]),
    'spec.networkOverrides[0].static.domain',
  ],
  [
    'VM with a command substitution in a static domain',
    base.vm,
    (o) => (spec(o).networkOverrides = [{ name: 'eth0', static: { address: '192.0.2.5', prefix: 24, domain: '$(reboot).example' } }]),
    'spec.networkOverrides[0].static.domain',
  ],
  [
    'VM overriding an interface named $(reboot)',
    base.vm,
    (o) => (spec(o).networkOverrides = [{ name: '$(reboot)', static: { address: '192.0.2.5', prefix: 24 } }]),
    'spec.networkOverrides[0].name',
  ],
  [
    'VM with an unknown anti-affinity mode',
    base.vm,
    (o) => (spec(o).placement = { antiAffinity: [{ topologyKey: 'name', labelSelector: {}, mode: 'maybe' }] }),
    'spec.placement.antiAffinity[0].mode: Unsupported value',
  ],
  [
    'VM selector with In and no values',
    base.vm,
    (o) => (spec(o).placement = { providerSelector: { matchExpressions: [{ key: 'site', operator: 'In' }] } }),
    'spec.placement.providerSelector.matchExpressions[0].values',
  ],
  ['Provider of an unknown backend', base.provider, (o) => (spec(o).providerClassRef.name = 'hyperv'), 'spec.providerClassRef.name: Unsupported value'],
  ['Provider without an endpoint', base.provider, (o) => delete spec(o).connection.endpoint, 'spec.connection.endpoint: Required value'],
  ['vSphere Provider without credentials', base.provider, (o) => delete spec(o).connection.credentialsRef, 'spec.connection.credentialsRef: Invalid value'],
  [
    'Cloud Hypervisor Provider with credentials',
    () => {
      const o = base.provider('cloud-hypervisor', 'unix:///run/banlieue');
      delete spec(o).connection.credentialsRef;
      return o;
    },
    (o) => (spec(o).connection.credentialsRef = { name: 'creds' }),
    'spec.connection.credentialsRef: Invalid value: connection.credentialsRef is required for vsphere, proxmox and libvirt and forbidden for cloud-hypervisor',
  ],
  [
    'Provider with two caBundle sources',
    base.provider,
    (o) => (spec(o).connection.caBundle = { inline: 'PEM', secretRef: { name: 'ca' } }),
    'spec.connection.caBundle: Invalid value: exactly one of inline, configMapRef or secretRef',
  ],
  ['Provider with an empty caBundle', base.provider, (o) => (spec(o).connection.caBundle = {}), 'spec.connection.caBundle: Invalid value'],
  [
    'libvirt Provider skipping TLS verification',
    () => base.provider('libvirt', 'qemu+tls://kvm1.example.com/system'),
    (o) => (spec(o).connection.insecureSkipTLSVerify = true),
    'spec.connection.insecureSkipTLSVerify: Invalid value',
  ],
  [
    'vSphere Provider over plain http',
    base.provider,
    (o) => (spec(o).connection.endpoint = 'http://vc.example.com/sdk'),
    'spec.connection.endpoint: Invalid value: connection.endpoint must start with https:// for vsphere',
  ],
  [
    'libvirt Provider with an https endpoint',
    () => base.provider('libvirt', 'qemu+tls://kvm1.example.com/system'),
    (o) => (spec(o).connection.endpoint = 'https://kvm1.example.com'),
    'spec.connection.endpoint: Invalid value: connection.endpoint must start with qemu+tls://',
  ],
  [
    'Provider offering an unknown feature',
    base.provider,
    (o) => (spec(o).capabilities = { features: ['teleport'] }),
    'spec.capabilities.features[0]: Unsupported value',
  ],
  [
    'Provider with a storage class declared twice',
    base.provider,
    (o) => (spec(o).capabilities = { storageClasses: [{ name: 'fast' }, { name: 'fast' }] }),
    'spec.capabilities.storageClasses[1]: Duplicate value',
  ],
  ['VMClass with 0 CPUs', base.vmClass, (o) => (spec(o).hardware.cpus = 0), 'spec.hardware.cpus'],
  ['VMClass with more than 256 CPUs', base.vmClass, (o) => (spec(o).hardware.cpus = 1024), 'spec.hardware.cpus'],
  ['VMClass without disks', base.vmClass, (o) => (spec(o).hardware.disks = []), 'spec.hardware.disks'],
  ['VMClass with an unknown firmware', base.vmClass, (o) => (spec(o).firmware = 'uefi'), 'spec.firmware: Unsupported value'],
  ['VMClass with a tiny MTU', base.vmClass, (o) => (spec(o).network.interfaces[0].mtu = 100), 'spec.network.interfaces[0].mtu'],
  ['VMClass with an interface named $(reboot)', base.vmClass, (o) => (spec(o).network.interfaces[0].name = '$(reboot)'), 'spec.network.interfaces[0].name'],
  [
    'VMClass with a newline in an interface name',
    base.vmClass,
    (o) => (spec(o).network.interfaces[0].name = 'eth0\nset-name: x'),
    'spec.network.interfaces[0].name',
  ],
  [
    'VMClass with a 16-character interface name',
    base.vmClass,
    (o) => (spec(o).network.interfaces[0].name = 'a234567890123456'),
    'spec.network.interfaces[0].name',
  ],
  [
    'VMClass with ": " in an interface domain',
    base.vmClass,
    (o) => (spec(o).network.interfaces[0].ipam = { mode: 'static', domain: 'lab.example: x' }),
    'spec.network.interfaces[0].ipam.domain',
  ],
  [
    'VMClass disk without a storage class',
    base.vmClass,
    (o) => delete spec(o).hardware.disks[0].storageClass,
    'spec.hardware.disks[0].storageClass: Required value',
  ],
  ['VMImage for an unknown architecture', base.vmImage, (o) => (spec(o).architecture = 'riscv'), 'spec.architecture: Unsupported value'],
  ['VMImage without sources', base.vmImage, (o) => (spec(o).sources = []), 'spec.sources'],
  [
    'VMImage with a Proxmox template that is no VMID',
    base.vmImage,
    (o) => (spec(o).sources = [{ providerClass: 'proxmox', kind: 'Template', ref: 'ubuntu' }]),
    'spec.sources[0].ref',
  ],
  [
    'VMImage with a clone mode on a vSphere template',
    base.vmImage,
    (o) => (spec(o).sources = [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu', cloneMode: 'Linked' }]),
    'spec.sources[0].cloneMode',
  ],
  [
    'VMImage with an md5 checksum',
    base.vmImage,
    (o) => (spec(o).sources = [{ providerClass: 'libvirt', kind: 'Url', ref: 'https://img.example.com/u.img', checksum: 'md5:abc' }]),
    'spec.sources[0].checksum',
  ],
  [
    'VMImage with a user and password in a Url',
    base.vmImage,
    (o) =>
      (spec(o).sources = [
        { providerClass: 'cloud-hypervisor', kind: 'Url', ref: 'https://mirror:hunter2@img.example.com/u.img', checksum: `sha256:${'0'.repeat(64)}` },
      ]),
    'must not carry a user or password',
  ],
  [
    'VMImage with two sources for one backend',
    base.vmImage,
    (o) => spec(o).sources.push({ providerClass: 'vsphere', kind: 'Template', ref: 'other' }),
    'spec.sources[1]: Duplicate value',
  ],
  [
    'VSphereMachine with a malformed MAC',
    base.vsphereMachine,
    (o) => (spec(o).network = [{ name: 'nic0', portGroup: 'vm', macAddress: 'zz' }]),
    'spec.network[0].macAddress',
  ],
  [
    'VSphereMachine with "#" in a static domain',
    base.vsphereMachine,
    (o) => (spec(o).network = [{ name: 'eth0', portGroup: 'vm', ipam: { static: { address: '192.0.2.5', prefix: 24, domain: 'lab.example #x' } } }]),
    'spec.network[0].ipam.static.domain',
  ],
  ['VSphereMachine with an empty providerID', base.vsphereMachine, (o) => (spec(o).providerID = ''), 'spec.providerID'],
  [
    'ProxmoxMachine with a static NIC and no isoStorage',
    base.proxmoxMachine,
    (o) => (spec(o).nics[0].ipam = { static: { address: '192.0.2.7', prefix: 24 } }),
    'spec.isoStorage: Invalid value',
  ],
  ['ProxmoxMachine with VLAN 5000', base.proxmoxMachine, (o) => (spec(o).nics[0].vlan = 5000), 'spec.nics[0].vlan'],
  ['ProxmoxMachine with a template VMID below 100', base.proxmoxMachine, (o) => (spec(o).templateVmid = 5), 'spec.templateVmid'],
  ['LibvirtMachine booting from PXE', base.libvirtMachine, (o) => (spec(o).bootSource.kind = 'pxe'), 'spec.bootSource.kind: Unsupported value'],
  [
    "LibvirtMachine booting from an overlay on another machine's disk",
    base.libvirtMachine,
    (o) => (spec(o).bootSource.volume = 'default-pool/1b4e28ba-2fa1-11d2-883f-0016d3cca427-0a1b2c3d4e5f60718293-os.qcow2'),
    "names a machine's disk (<uuid>-…): a machine starts from an image volume",
  ],
  [
    'LibvirtMachine plugged into a bridge named with markup',
    base.libvirtMachine,
    (o) => (spec(o).network = [{ name: 'eth0', source: { kind: 'bridge', name: "br0'/>" } }]),
    'spec.network[0].source.name',
  ],
  ['ProxmoxMachine with a cpu type carrying more options', base.proxmoxMachine, (o) => (spec(o).cpuType = 'host,flags=+pcid'), 'spec.cpuType'],
  ['CloudHypervisorMachine with max below boot vCPUs', base.chMachine, (o) => (spec(o).cpus = { boot: 4, max: 2 }), 'spec.cpus.max'],
  ['VSphereCluster with port 0', base.vsphereCluster, (o) => (spec(o).controlPlaneEndpoint.port = 0), 'spec.controlPlaneEndpoint.port'],
];

/** [description, base object, change applied as an update, expected message text]. */
const updateCases: [string, () => Obj, Mutate, string][] = [
  ['changing a VM classRef', base.vm, (o) => (spec(o).classRef = { name: 'large' }), 'spec.classRef: Invalid value: classRef is immutable'],
  ['changing a VM imageRef', base.vm, (o) => (spec(o).imageRef = { name: 'debian' }), 'imageRef is immutable'],
  ['changing a Provider backend', base.provider, (o) => (spec(o).providerClassRef = { name: 'proxmox' }), 'providerClassRef is immutable'],
  [
    'changing spec.providerID once set',
    () => {
      const o = base.vsphereMachine();
      spec(o).providerID = 'vsphere://4211a1b2-0000-0000-0000-000000000001';
      return o;
    },
    (o) => (spec(o).providerID = 'vsphere://4211a1b2-0000-0000-0000-000000000002'),
    'spec.providerID: Invalid value',
  ],
  [
    'removing spec.providerID once set',
    () => {
      const o = base.proxmoxMachine();
      spec(o).providerID = 'proxmox://4211a1b2-0000-0000-0000-000000000001';
      return o;
    },
    (o) => delete spec(o).providerID,
    'providerID is immutable once set',
  ],
  // Changing a template's spec: an admission policy, not the schema (template-immutability.test.ts).
  [
    'moving a cluster control-plane endpoint',
    base.vsphereCluster,
    (o) => (spec(o).controlPlaneEndpoint.host = '192.0.2.99'),
    'controlPlaneEndpoint is immutable once set',
  ],
  // Every InfraCluster kind: a CEL rule on the field itself never sees its removal.
  ...['VSphereCluster', 'ProxmoxCluster', 'LibvirtCluster', 'CloudHypervisorCluster'].map((kind): [string, () => Obj, Mutate, string] => [
    `removing a ${kind} control-plane endpoint once set`,
    () => ({ ...base.vsphereCluster(), kind }),
    (o) => delete spec(o).controlPlaneEndpoint,
    'controlPlaneEndpoint is immutable once set: it can be neither changed nor removed',
  ]),
];

describe('the API served by kube-apiserver', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  const api = objectApi();

  const place = (o: Obj): Obj => {
    const copy = clone(o);
    if (copy.apiVersion !== CORE || !['VMClass', 'VMImage'].includes(copy.kind ?? '')) {
      copy.metadata = { ...copy.metadata, namespace: ns.name };
    }
    return copy;
  };

  beforeAll(async () => {
    ns = await createNamespace('api');
  });
  afterAll(async () => {
    await ns.remove();
  });

  it('has at least 30 distinct invalid objects under test', () => {
    expect(createCases.length + updateCases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(exampleDocs)('accepts %s', async (_, obj) => {
    await expect(api.create(place(obj), undefined, 'All')).resolves.toMatchObject({ kind: obj.kind });
  });

  it.each(createCases)('refuses a %s', async (_, make, mutate, expected) => {
    const obj = make();
    await expect(api.create(place(obj), undefined, 'All'), 'the unchanged object must be valid').resolves.toBeDefined();
    mutate(obj);
    let accepted: unknown;
    const err = await api.create(place(obj), undefined, 'All').then(
      (o) => void (accepted = o),
      (e: unknown) => e,
    );
    expect(err, `the API server accepted it: ${JSON.stringify(accepted)}`).toBeDefined();
    expect(apiMessage(err), apiMessage(err)).toContain(expected);
  });

  it.each(updateCases)('refuses %s', async (description, make, mutate, expected) => {
    const original = place(make());
    original.metadata = { ...original.metadata, name: `upd-${updateCases.findIndex((c) => c[0] === description)}` };
    const created = (await api.create(original)) as Obj;
    const changed = clone(created);
    mutate(changed);
    const err = await api.replace(changed).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, 'the API server accepted the update').toBeDefined();
    expect(apiMessage(err), apiMessage(err)).toContain(expected);
  });

  it('accepts a control-plane endpoint set later on an InfraCluster that had none, and other spec changes once it is set', async () => {
    const created = (await api.create(
      place({ ...base.vsphereCluster(), metadata: { name: 'endpoint-later' }, spec: { providerRefs: [{ name: 'vcenter-a' }] } }),
    )) as Obj;
    const withEndpoint = clone(created);
    spec(withEndpoint).controlPlaneEndpoint = { host: '192.0.2.20', port: 6443 };
    const updated = (await api.replace(withEndpoint)) as Obj;
    spec(updated).providerRefs = [{ name: 'vcenter-b' }];
    const changed = (await api.replace(updated)) as Obj;
    expect(spec(changed)).toMatchObject({ controlPlaneEndpoint: { host: '192.0.2.20', port: 6443 }, providerRefs: [{ name: 'vcenter-b' }] });
  });
});
