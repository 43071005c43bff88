// Proxmox failure domains from discovered nodes (pure), and VMImage rows.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { resolveTemplate } from '../../../../controller/backends/proxmox/images.js';
import { isoStorageOf, toFailureDomains, type NodeInventory } from '../../../../controller/backends/proxmox/mapping.js';

const GIB = 1024 ** 3;

function provider(extra: Partial<Provider['spec']> = {}): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'pve', namespace: 'ns' },
    spec: {
      providerClassRef: { name: 'proxmox' },
      connection: { endpoint: 'https://pve:8006', credentialsRef: { name: 'pve' } },
      capabilities: {
        storageClasses: [
          { name: 'fast', target: { storage: 'local-lvm' } },
          { name: 'shared', target: { storage: 'ceph' } },
          { name: 'isos', target: { storage: 'local' } },
        ],
        networkClasses: [
          { name: 'lan', target: { bridge: 'vmbr0' } },
          { name: 'vlan20', target: { bridge: 'vmbr0', vlan: '20' } },
          { name: 'plain-vlan', target: { bridge: 'vmbr1', vlan: '30' } },
          { name: 'other', target: { portGroup: 'x' } },
        ],
      },
      ...extra,
    },
  } as Provider;
}

const node = (name: string, overrides: Partial<NodeInventory> = {}): NodeInventory => ({
  node: name,
  clusterName: 'lab',
  version: '9.1.1',
  cpus: 16,
  memoryBytes: 64 * GIB,
  memoryFreeBytes: 40 * GIB + 5,
  storages: [
    { storage: 'local', content: ['iso', 'vztmpl'], usable: true, shared: false, availBytes: 100 * GIB },
    { storage: 'local-lvm', content: ['images', 'rootdir'], usable: true, shared: false, availBytes: 500 * GIB },
    { storage: 'ceph', content: ['images'], usable: true, shared: true, availBytes: 900 * GIB },
  ],
  bridges: [
    { iface: 'vmbr0', vlanAware: true },
    { iface: 'vmbr1', vlanAware: false },
  ],
  ...overrides,
});

describe('Proxmox failure domains', () => {
  it('makes one failure domain per node, labelled with node and cluster, with the classes the node reaches', () => {
    const fds = toFailureDomains(
      provider(),
      [node('pve2'), node('pve1', { storages: node('x').storages.filter((s) => s.storage !== 'ceph') })],
      'https://pve:8006',
    );
    expect(fds.map((fd) => fd.name)).toEqual(['pve-pve1', 'pve-pve2']);
    const [pve1, pve2] = fds;
    expect(pve1?.labels).toEqual({ name: 'pve-pve1', node: 'pve1', cluster: 'lab' });
    expect(pve1?.attributes?.availableStorageClasses).toEqual(['fast']);
    expect(pve2?.attributes?.availableStorageClasses).toEqual(['fast', 'shared']);
    // vmbr1 is not VLAN-aware: no tagged class on it; an unknown target key never matches.
    expect(pve2?.attributes?.availableNetworkClasses).toEqual(['lan', 'vlan20']);
    expect(pve2?.attributes?.raw).toMatchObject({
      node: 'pve2',
      cluster: 'pve2',
      datacenter: 'lab',
      isoStorage: 'local',
      'vlan.vlan20': '20',
      cpus: '16',
      memoryGiB: '64',
      memoryFreeGiB: '40',
      'storageFreeGiB.ceph': '900',
      endpoint: 'https://pve:8006',
      version: '9.1.1',
    });
  });

  it('publishes each node’s room for VMs in the common capacity shape: CPUs, memory and each usable storage by ID', () => {
    const [fd] = toFailureDomains(
      provider(),
      [node('pve1', { storages: [...node('pve1').storages, { storage: 'off', content: ['images'], usable: false, shared: false, availBytes: GIB }] })],
      'https://pve:8006',
    );
    expect(fd?.capacity).toEqual({
      cpus: 16,
      memoryMiB: 64 * 1024,
      freeMemoryMiB: 40 * 1024,
      storage: [
        { target: 'ceph', freeGiB: 900 },
        { target: 'local', freeGiB: 100 },
        { target: 'local-lvm', freeGiB: 500 },
      ],
    });
  });

  it('takes a class per node from perZone (cluster: <node>) and names a node by its override', () => {
    const p = provider({
      failureDomainNameOverrides: [{ cluster: 'pve1', name: 'rack-a' }],
      capabilities: { storageClasses: [{ name: 'fast', target: { storage: 'nope' }, perZone: [{ cluster: 'pve1', target: { storage: 'local-lvm' } }] }] },
    });
    const fds = toFailureDomains(p, [node('pve1'), node('pve2')], 'https://pve:8006');
    expect(fds.map((fd) => [fd.name, fd.attributes?.availableStorageClasses])).toEqual([
      ['pve-pve2', []],
      ['rack-a', ['fast']],
    ]);
  });

  it('puts seed ISOs on the seed-iso class storage, else on the first ISO storage (shared first)', () => {
    const withSeed = provider({ capabilities: { storageClasses: [{ name: 'seed-iso', target: { storage: 'nfs-iso' } }] } });
    const nfs = { storage: 'nfs-iso', content: ['iso'], usable: true, shared: true };
    expect(isoStorageOf(withSeed, node('pve1'))).toBeUndefined();
    expect(isoStorageOf(withSeed, node('pve1', { storages: [...node('x').storages, nfs] }))).toBe('nfs-iso');
    expect(isoStorageOf(provider(), node('pve1', { storages: [...node('x').storages, { ...nfs, storage: 'z-shared' }] }))).toBe('z-shared');
    expect(isoStorageOf(provider(), node('pve1', { storages: [] }))).toBeUndefined();
  });
});

describe('Proxmox VMImage rows', () => {
  const vms = [
    { id: 'qemu/9000', type: 'qemu' as const, vmid: 9000, node: 'pve1', name: 'ubuntu', template: true },
    { id: 'qemu/9100', type: 'qemu' as const, vmid: 9100, node: 'pve3', name: 'ubuntu', template: true },
    { id: 'qemu/120', type: 'qemu' as const, vmid: 120, node: 'pve1', name: 'app', template: false },
  ];
  const source = (ref: string, kind: 'Template' | 'Url' = 'Template') => ({ providerClass: 'proxmox' as const, kind, ref });

  it('is ready for a template, saying on which nodes it is found', () => {
    expect(resolveTemplate(source('9000'), vms)).toEqual({
      ready: true,
      resolvedRef: '9000',
      message: 'template ubuntu on pve1; clonable without a cross-node clone on pve1, pve3',
    });
  });

  it.each([
    ['9999', 'ImageSourceNotFound', /no VM 9999/],
    ['120', 'ImageSourceNotFound', /not a template/],
  ])('is not ready for ref %s: %s', (ref, reason, message) => {
    const row = resolveTemplate(source(ref), vms);
    expect(row).toMatchObject({ ready: false, reason });
    expect(row.message).toMatch(message);
  });

  it('refuses sources other than templates', () => {
    expect(resolveTemplate(source('https://x/y.img', 'Url'), vms)).toMatchObject({ ready: false, reason: 'UnsupportedSource' });
  });
});
