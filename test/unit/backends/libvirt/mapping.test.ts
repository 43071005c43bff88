// A libvirt host as its Provider's one failure domain (pure).
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { failureDomainName, toFailureDomains, type HostInventory } from '../../../../controller/backends/libvirt/mapping.js';
import { buildLibvirtMachine } from '../../../../controller/backends/libvirt/build-machine.js';

const host: HostInventory = {
  hostname: 'kvm01.lab',
  cpus: 32,
  memoryBytes: 128 * 1024 ** 3,
  freeMemoryBytes: 100.7 * 1024 ** 3,
  pools: [
    { name: 'default', availableBytes: 500.5 * 1024 ** 3 },
    { name: 'nvme', availableBytes: 1024 ** 4 },
  ],
  networks: ['default'],
};

function provider(spec: Partial<Provider['spec']> = {}): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name: 'kvm01', namespace: 'vms' },
    spec: {
      providerClassRef: { name: 'libvirt' },
      connection: { endpoint: 'qemu+tls://kvm01.lab/system', credentialsRef: { name: 'c' } },
      capabilities: {
        storageClasses: [
          { name: 'standard', target: { pool: 'default' } },
          { name: 'fast', target: { pool: 'nvme' } },
          { name: 'gone', target: { pool: 'ssd' } },
          { name: 'odd', target: { datastore: 'default' } },
        ],
        networkClasses: [
          { name: 'lan', target: { network: 'default' } },
          { name: 'servers', target: { bridge: 'br-servers' } },
          { name: 'dmz', target: { network: 'dmz' } },
        ],
        features: ['vtpm'],
      },
      ...spec,
    },
  } as Provider;
}

describe('libvirt failure domain', () => {
  it('is one per host, named after the Provider and labelled with the hostname', () => {
    const [fd, ...rest] = toFailureDomains(provider(), host);
    expect(rest).toEqual([]);
    expect(fd?.name).toBe('kvm01');
    expect(fd?.labels).toEqual({ name: 'kvm01', hostname: 'kvm01.lab' });
    expect(fd?.attributes?.features).toEqual(['vtpm']);
  });

  it('is a DNS label of at most 63 characters, distinct for two Providers whose long names share their start', () => {
    const named = (name: string): string => failureDomainName({ ...provider(), metadata: { name, namespace: 'vms' } } as Provider, 'kvm01.lab');
    const a = named(`${'kvm.'.repeat(60)}a`);
    expect(a).toMatch(/^(kvm-){13}kv-[0-9a-f]{8}$/);
    expect(named(`${'kvm.'.repeat(60)}b`)).not.toBe(a);
  });

  it('offers the classes whose pool or network the host has active, and the declared bridges', () => {
    const [fd] = toFailureDomains(provider(), host);
    expect(fd?.attributes?.availableStorageClasses).toEqual(['standard', 'fast']);
    expect(fd?.attributes?.availableNetworkClasses).toEqual(['lan', 'servers']);
  });

  it('publishes the host’s capacity in raw, rounded down to whole GiB, and the domain type', () => {
    const [fd] = toFailureDomains(provider({ libvirt: { domainType: 'qemu' } }), host);
    expect(fd?.attributes?.raw).toEqual({
      hostname: 'kvm01.lab',
      domainType: 'qemu',
      bridges: 'br-servers',
      pools: 'default,nvme',
      networks: 'default',
      cpus: '32',
      memoryMiB: String(128 * 1024),
      freeMemoryGiB: '100',
      'availableGiB.default': '500',
      'availableGiB.nvme': '1024',
    });
    expect(toFailureDomains(provider(), host)[0]?.attributes?.raw?.domainType).toBe('kvm');
  });

  it('publishes its room for VMs in the common capacity shape: CPUs, memory (not free memory) and each active pool, rounded down to whole GiB', () => {
    const [fd] = toFailureDomains(provider(), { ...host, pools: [{ name: 'default', availableBytes: 500.5 * 1024 ** 3, capacityBytes: 2000.9 * 1024 ** 3 }] });
    expect(fd?.capacity).toEqual({
      cpus: 32,
      memoryMiB: 128 * 1024,
      storage: [{ target: 'default', freeGiB: 500, capacityGiB: 2000 }],
    });
  });

  it('takes an override naming the host, as a DNS label', () => {
    expect(failureDomainName(provider({ failureDomainNameOverrides: [{ cluster: 'kvm01.lab', name: 'rack-1' }] }), 'kvm01.lab')).toBe('rack-1');
    expect(failureDomainName(provider({ failureDomainNameOverrides: [{ cluster: 'other', name: 'rack-2' }] }), 'kvm01.lab')).toBe('kvm01');
  });
});

describe('LibvirtMachine built from a placed VirtualMachine', () => {
  it('plugs a NIC into a bridge when its class targets one the failure domain lists, into a libvirt network otherwise', () => {
    const context = {
      input: { vm: { spec: {} }, vmClass: { spec: {} }, image: {} },
      apiVersion: 'infrastructure.banlieue.io/v1alpha1',
      metadata: { name: 'web-1', namespace: 'vms' },
      commonSpec: {},
      hardware: { cpus: 2, memoryMiB: 2048, disks: [] },
      disks: [{ disk: { name: 'os', sizeGiB: 20, storageClass: 'fast' }, backendId: 'nvme' }],
      nics: [
        { nic: { name: 'eth0', networkClass: 'lan' }, backendId: 'default', ipam: undefined },
        { nic: { name: 'eth1', networkClass: 'servers' }, backendId: 'br-servers', ipam: undefined },
      ],
      imageRef: 'nvme/debian-12.qcow2',
      failureDomainName: 'kvm01',
      raw: { bridges: 'br-servers' },
    } as unknown as Parameters<typeof buildLibvirtMachine>[0];
    const built = buildLibvirtMachine(context);
    if (!built.ok) throw new Error(built.message);
    expect(built.object.spec.network?.map((n) => n.source)).toEqual([
      { kind: 'network', name: 'default' },
      { kind: 'bridge', name: 'br-servers' },
    ]);
    expect(built.object.spec.bootSource).toEqual({ kind: 'backingVolume', volume: 'nvme/debian-12.qcow2' });
    expect(built.object.spec.domainName).toBe('vms-web-1');
  });
});
