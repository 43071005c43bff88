import { describe, expect, it } from 'vitest';
import { BACKENDS, type BackendName } from '../../../../infra/api/backends.js';
import { Annotation, Label } from '../../../../infra/api/well-known.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { buildInfraMachine as buildWith, type InfraBuildInput } from '../../../../controller/reconcilers/virtual-machine/infra-builders.js';
import { placementSpecDigest } from '../../../../controller/reconcilers/virtual-machine/placement.js';
import type { CloudHypervisorMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { LibvirtMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { ProxmoxMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { VSphereMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BACKEND_SAMPLES } from '../../../support/backend-samples.js';

/** The four built-in kinds, as the tests read their backend fields. */
type InfraMachine = VSphereMachine | ProxmoxMachine | LibvirtMachine | CloudHypervisorMachine;

function buildInfraMachine(input: InfraBuildInput): { ok: true; object: InfraMachine } | { ok: false; message: string } {
  return buildWith(input, BUILT_IN_BACKENDS) as { ok: true; object: InfraMachine } | { ok: false; message: string };
}
import { aClass, aPlacement, aStaticClass, aVm, anImage, VM_UID } from './fixtures.js';

function build(input: Partial<InfraBuildInput> & { placement: InfraBuildInput['placement'] }): InfraMachine {
  const result = buildInfraMachine({ vm: aVm(), vmClass: aClass(), image: anImage(), ...input });
  if (!result.ok) throw new Error(`expected a build, got: ${result.message}`);
  return result.object;
}

function buildError(input: Partial<InfraBuildInput> & { placement: InfraBuildInput['placement'] }): string {
  const result = buildInfraMachine({ vm: aVm(), vmClass: aClass(), image: anImage(), ...input });
  if (result.ok) throw new Error(`expected an error, got ${result.object.kind}`);
  return result.message;
}

/** Paths of every undefined value: SSA would claim them, and JSON drops them silently. */
function undefinedPaths(value: unknown, path = ''): string[] {
  if (value === undefined) return [path];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => undefinedPaths(v, `${path}.${k}`));
}

/** The image a `backend` machine boots, as its descriptor reads it back from the spec. */
function imageRefOf(backend: BackendName, spec: InfraMachine['spec']): string | undefined {
  return BUILT_IN_BACKENDS.get(backend)?.carriedTargets(spec).imageRef;
}

// Cloud Hypervisor has no data disks, so the shared cases use a one-disk class.
const oneDiskClass = aClass({ hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] } });

describe('infra machine build: what every backend shares', () => {
  it.each(BACKENDS)('names, labels and owns the %s machine like the VM, and says what spec.placement it was placed for', (backend) => {
    const object = build({ vmClass: oneDiskClass, placement: aPlacement(backend, { disks: 1 }) });
    expect(object.apiVersion).toBe('infrastructure.banlieue.io/v1alpha1');
    expect(object.kind).toBe(BACKEND_SAMPLES[backend].machineKind);
    expect(object.metadata).toEqual({
      name: 'web-1',
      namespace: 'team-a',
      labels: { app: 'web', [Label.ownedBy]: 'web-1' },
      annotations: { [Annotation.placementSpec]: placementSpecDigest(aVm()) },
      ownerReferences: [{ apiVersion: 'banlieue.io/v1alpha1', kind: 'VirtualMachine', name: 'web-1', uid: VM_UID, controller: true, blockOwnerDeletion: true }],
    });
  });

  it('gives the same placement digest whatever the key order of spec.placement, and another one for another placement', () => {
    const selector = { matchLabels: { env: 'prod', tier: 'web' } };
    const reordered = { matchLabels: { tier: 'web', env: 'prod' } };
    const digest = placementSpecDigest(aVm({ placement: { providerSelector: selector, failureDomainSelector: selector } }));
    expect(placementSpecDigest(aVm({ placement: { failureDomainSelector: reordered, providerSelector: reordered } }))).toBe(digest);
    expect(placementSpecDigest(aVm({ placement: { providerSelector: selector } }))).not.toBe(digest);
  });

  it('copies the VM deletionPolicy into the machine', () => {
    expect(build({ vm: aVm({ deletionPolicy: 'Retain' }), vmClass: oneDiskClass, placement: aPlacement('vsphere', { disks: 1 }) }).spec.deletionPolicy).toBe(
      'Retain',
    );
  });

  it.each(BACKENDS)('sets the %s contract fields and leaves providerID to the provider', (backend) => {
    const { spec } = build({ vmClass: oneDiskClass, placement: aPlacement(backend, { disks: 1 }) });
    expect(spec.providerRef).toEqual({ name: `${backend}-a` });
    expect(spec.failureDomain).toBe('fd-1');
    expect(spec.desiredPowerState).toBe('PoweredOn');
    expect(spec).not.toHaveProperty('providerID');
    expect(spec).not.toHaveProperty('userDataSecretRef');
  });

  it.each(BACKENDS)('points the %s machine at the rendered user-data Secret under key value', (backend) => {
    const { spec } = build({ vmClass: oneDiskClass, placement: aPlacement(backend, { disks: 1 }), userDataSecretName: 'web-1-user-data' });
    expect(spec.userDataSecretRef).toEqual({ name: 'web-1-user-data', key: 'value' });
  });

  it.each(BACKENDS)('carries the desired power state of the VM to the %s machine', (backend) => {
    const { spec } = build({ vm: aVm({ desiredPowerState: 'PoweredOff' }), vmClass: oneDiskClass, placement: aPlacement(backend, { disks: 1 }) });
    expect(spec.desiredPowerState).toBe('PoweredOff');
  });

  it.each(BACKENDS)('writes no undefined value anywhere in the %s machine', (backend) => {
    const object = build({ vmClass: oneDiskClass, placement: aPlacement(backend, { disks: 1 }) });
    expect(undefinedPaths(object)).toEqual([]);
  });

  it.each(BACKENDS)('prefers the %s provider row resolvedRef over the image source ref', (backend) => {
    const image = anImage([
      { providerNamespace: 'team-a', providerName: `${backend}-a`, ready: true, resolvedRef: '4242' },
      { providerNamespace: 'team-b', providerName: `${backend}-a`, ready: true, resolvedRef: 'other' },
    ]);
    const object = build({ vmClass: oneDiskClass, image, placement: aPlacement(backend, { disks: 1 }) });
    expect(imageRefOf(backend, object.spec)).toBe('4242');
  });
});

describe('VSphereMachine build', () => {
  it('resolves template, placement, hardware with overrides, disks and port groups', () => {
    const vm = aVm({
      folder: '/dc1/vm/team-a',
      hardwareOverride: { cpus: 4, memoryMiB: 8192, diskOverrides: [{ name: 'os', sizeGiB: 40 }] },
      networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }],
    });
    const object = build({ vm, vmClass: aStaticClass(), placement: aPlacement('vsphere', { networks: ['prod', 'backup'] }) });
    expect(object.spec).toEqual({
      providerRef: { name: 'vsphere-a' },
      failureDomain: 'fd-1',
      desiredPowerState: 'PoweredOn',
      template: BACKEND_SAMPLES.vsphere.source.ref,
      datacenter: 'dc1',
      cluster: 'c1',
      resourcePool: 'rp-gold',
      folder: '/dc1/vm/team-a',
      datastore: 'ds-ssd',
      numCpus: 4,
      memoryMiB: 8192,
      firmware: 'efi',
      disks: [
        { name: 'os', sizeGiB: 40, provisioning: 'thin' },
        { name: 'data', sizeGiB: 100, provisioning: 'thick' },
      ],
      network: [
        {
          name: 'eth0',
          portGroup: 'pg-prod',
          ipam: {
            static: { address: '10.0.0.10', prefix: 24, gateway: '10.0.0.1', nameservers: ['10.0.0.53', '10.0.1.53'], domain: 'lab.example' },
          },
        },
        { name: 'eth1', portGroup: 'pg-prod1' },
      ],
    });
  });

  it('keeps the override gateway, nameservers and domain over the class ones', () => {
    const vm = aVm({
      networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24, gateway: '10.0.0.254', nameservers: ['1.1.1.1'], domain: 'vm.example' } }],
    });
    const object = build({ vm, vmClass: aStaticClass(), placement: aPlacement('vsphere', { networks: ['prod', 'backup'] }) });
    expect(object.spec).toHaveProperty('network.0.ipam', {
      static: { address: '10.0.0.10', prefix: 24, gateway: '10.0.0.254', nameservers: ['1.1.1.1'], domain: 'vm.example' },
    });
  });

  it('gives a DHCP class interface a static address when the VM overrides it', () => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '192.168.1.5', prefix: 16 } }] });
    const object = build({ vm, placement: aPlacement('vsphere') });
    expect(object.spec).toHaveProperty('network', [{ name: 'eth0', portGroup: 'pg-prod', ipam: { static: { address: '192.168.1.5', prefix: 16 } } }]);
  });

  it('omits resourcePool and folder when neither the failure domain nor the VM sets them', () => {
    const { spec } = build({ placement: aPlacement('vsphere', { raw: { datacenter: 'dc1', cluster: 'c1' } }) });
    expect(spec).not.toHaveProperty('resourcePool');
    expect(spec).not.toHaveProperty('folder');
  });
});

describe('ProxmoxMachine build', () => {
  it('resolves node, template VMID, storages, cores and virtio NICs', () => {
    const vm = aVm({ hardwareOverride: { diskOverrides: [{ name: 'data', sizeGiB: 200 }] } });
    const placement = aPlacement(
      'proxmox',
      {},
      {
        resolvedStorage: [
          { className: 'fast', backendId: 'ceph' },
          { className: 'fast', backendId: 'local-lvm' },
        ],
      },
    );
    const object = build({ vm, placement });
    expect(object.spec).toEqual({
      providerRef: { name: 'proxmox-a' },
      failureDomain: 'fd-1',
      desiredPowerState: 'PoweredOn',
      node: 'pve1',
      templateVmid: 9000,
      storage: 'ceph',
      cores: 2,
      sockets: 1,
      memoryMiB: 4096,
      firmware: 'efi',
      osDiskSizeGiB: 20,
      dataDisks: [{ name: 'data', sizeGiB: 200, storage: 'local-lvm' }],
      nics: [{ name: 'eth0', bridge: 'vmbr0', model: 'virtio' }],
    });
  });

  it('clones as the image says: Linked when its proxmox source asks for it, else the default (Full)', () => {
    const image = anImage();
    const linked = {
      ...image,
      spec: { ...image.spec, sources: image.spec.sources.map((s) => (s.providerClass === 'proxmox' ? { ...s, cloneMode: 'Linked' as const } : s)) },
    };
    expect(build({ image: linked, placement: aPlacement('proxmox') }).spec).toMatchObject({ cloneMode: 'Linked' });
    expect(build({ placement: aPlacement('proxmox') }).spec).not.toHaveProperty('cloneMode');
  });

  it.each([
    ['user-data is set', aVm(), 'web-1-user-data'],
    ['a NIC is static', aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] }), undefined],
  ])('adds the failure domain isoStorage when %s', (_, vm, userDataSecretName) => {
    const { spec } = build({ vm, placement: aPlacement('proxmox'), ...(userDataSecretName ? { userDataSecretName } : {}) });
    expect(spec).toHaveProperty('isoStorage', 'local');
  });

  it('omits isoStorage and dataDisks when there is no seed ISO and a single disk', () => {
    const { spec } = build({ vmClass: oneDiskClass, placement: aPlacement('proxmox', { disks: 1 }) });
    expect(spec).not.toHaveProperty('isoStorage');
    expect(spec).not.toHaveProperty('dataDisks');
  });
});

describe('LibvirtMachine build', () => {
  it('resolves domain name, pool, backing volume, hardware and libvirt networks', () => {
    const object = build({ placement: aPlacement('libvirt') });
    expect(object.spec).toEqual({
      providerRef: { name: 'libvirt-a' },
      failureDomain: 'fd-1',
      desiredPowerState: 'PoweredOn',
      domainName: 'team-a-web-1',
      pool: 'nvme',
      bootSource: { kind: 'backingVolume', volume: BACKEND_SAMPLES.libvirt.source.ref },
      vcpus: 2,
      memoryMiB: 4096,
      firmware: 'efi',
      disks: [
        { name: 'os', sizeGiB: 20 },
        { name: 'data', sizeGiB: 100 },
      ],
      network: [{ name: 'eth0', source: { kind: 'network', name: 'default' } }],
    });
  });

  it('plugs NICs into host bridges when the failure domain says networkKind bridge', () => {
    const object = build({ placement: aPlacement('libvirt', { raw: { networkKind: 'bridge' } }) });
    expect(object.spec).toHaveProperty('network', [{ name: 'eth0', source: { kind: 'bridge', name: 'default' } }]);
  });

  it('defaults firmware to bios when the class leaves it unset', () => {
    const { firmware: _unset, ...spec } = aClass().spec;
    const object = build({ vmClass: { ...aClass(), spec }, placement: aPlacement('libvirt') });
    expect(object.spec).toHaveProperty('firmware', 'bios');
  });
});

describe('CloudHypervisorMachine build', () => {
  it('resolves boot image, cpus, memory, OS disk, host storage class and network classes', () => {
    const vm = aVm({
      hardwareOverride: { cpus: 8 },
      networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }],
    });
    const object = build({ vm, vmClass: oneDiskClass, placement: aPlacement('cloud-hypervisor', { disks: 1 }) });
    expect(object.spec).toEqual({
      providerRef: { name: 'cloud-hypervisor-a' },
      failureDomain: 'fd-1',
      desiredPowerState: 'PoweredOn',
      bootSource: { kind: 'image', image: BACKEND_SAMPLES['cloud-hypervisor'].source.ref },
      cpus: { boot: 8 },
      memory: { sizeMiB: 4096 },
      osDiskSizeGiB: 20,
      storageClass: 'fast',
      nics: [{ name: 'eth0', networkClass: 'prod', ipam: { static: { address: '10.0.0.10', prefix: 24 } } }],
    });
  });
});

describe('infra machine build errors', () => {
  const noDatacenter = aPlacement('vsphere', { raw: { cluster: 'c1' } });
  const noCluster = aPlacement('vsphere', { raw: { datacenter: 'dc1' } });
  const spread = {
    resolvedStorage: [
      { className: 'fast', backendId: 'a' },
      { className: 'bulk', backendId: 'b' },
    ],
  };
  const staticVm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] });
  const urlImage = anImage();
  urlImage.spec.sources = urlImage.spec.sources.filter((s) => s.providerClass !== 'libvirt');

  it.each<[string, Partial<InfraBuildInput> & { placement: InfraBuildInput['placement'] }, string]>([
    ['vSphere without a raw datacenter', { placement: noDatacenter }, 'failure domain "fd-1" has no raw datacenter/cluster'],
    ['vSphere without a raw cluster', { placement: noCluster }, 'failure domain "fd-1" has no raw datacenter/cluster'],
    [
      'vSphere with disks on two datastores',
      { placement: aPlacement('vsphere', {}, spread) },
      'a VSphereMachine datastore holds every disk, but the class disks resolve to "a", "b"',
    ],
    ['Proxmox without a raw node', { placement: aPlacement('proxmox', { raw: { isoStorage: 'local' } }) }, 'failure domain "fd-1" has no raw node'],
    [
      'Proxmox with a template ref that is not a VMID',
      {
        image: anImage([{ providerNamespace: 'team-a', providerName: 'proxmox-a', ready: true, resolvedRef: 'local:9000' }]),
        placement: aPlacement('proxmox'),
      },
      'VMImage "ubuntu-24.04" proxmox ref "local:9000" is not a template VMID (an integer from 100)',
    ],
    [
      'Proxmox with user-data but no raw isoStorage',
      { userDataSecretName: 'web-1-user-data', placement: aPlacement('proxmox', { raw: { node: 'pve1' } }) },
      'failure domain "fd-1" has no raw isoStorage (needed for the cloud-init seed ISO)',
    ],
    [
      'Proxmox with a static NIC but no raw isoStorage',
      { vm: staticVm, placement: aPlacement('proxmox', { raw: { node: 'pve1' } }) },
      'failure domain "fd-1" has no raw isoStorage (needed for the cloud-init seed ISO)',
    ],
    [
      'libvirt with disks in two pools',
      { placement: aPlacement('libvirt', {}, spread) },
      'a LibvirtMachine pool holds every disk, but the class disks resolve to "a", "b"',
    ],
    [
      'Cloud Hypervisor with a data disk',
      { placement: aPlacement('cloud-hypervisor') },
      'CloudHypervisorMachine has only an OS disk, but class "small" has 2 disks',
    ],
    [
      'an image without a source for the backend',
      { image: urlImage, placement: aPlacement('libvirt') },
      'VMImage "ubuntu-24.04" has no source for providerClass libvirt',
    ],
    [
      'a disk override smaller than the class disk',
      { vm: aVm({ hardwareOverride: { diskOverrides: [{ name: 'os', sizeGiB: 10 }] } }), placement: aPlacement('libvirt') },
      'spec.hardwareOverride.diskOverrides[0].sizeGiB 10 is smaller than class disk "os" (20 GiB)',
    ],
    [
      'a static class interface without a VM address',
      { vmClass: aStaticClass(), placement: aPlacement('libvirt', { networks: ['prod', 'backup'] }) },
      'spec.networkOverrides has no address for interface "eth0", whose class ipam mode is static',
    ],
    [
      'a network override naming no class interface',
      { vm: aVm({ networkOverrides: [{ name: 'eth9', static: { address: '10.0.0.10', prefix: 24 } }] }), placement: aPlacement('libvirt') },
      'spec.networkOverrides[0].name "eth9" is not an interface of class "small"',
    ],
    [
      'a placement with fewer storage targets than disks',
      { placement: aPlacement('libvirt', { disks: 1 }) },
      'placement resolved 1 storage classes for 2 class disks',
    ],
    [
      'a placement with more network targets than interfaces',
      { placement: aPlacement('libvirt', { networks: ['prod', 'backup'] }) },
      'placement resolved 2 network classes for 1 class interfaces',
    ],
    ['a VM without a uid', { vm: aVm({}, { uid: undefined }), placement: aPlacement('libvirt') }, 'VirtualMachine metadata lacks name, namespace or uid'],
  ])('refuses %s', (_, input, message) => {
    expect(buildError(input)).toBe(message);
  });

  it('refuses a providerClass that has no machine kind', () => {
    const placement = { ...aPlacement('libvirt'), providerClass: 'hyperv' } as unknown as InfraBuildInput['placement'];
    expect(buildError({ placement })).toBe('providerClass "hyperv" has no infrastructure machine kind');
  });
});
