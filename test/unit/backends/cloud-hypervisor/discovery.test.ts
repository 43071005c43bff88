// The host as a failure domain: classes mapped to host classes that exist, withdrawn over capacity, endpoint checked.
import { describe, expect, it } from 'vitest';
import type { Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { assertServes, hostClassOf, parseEndpoint, toFailureDomains } from '../../../../controller/backends/cloud-hypervisor/discovery.js';
import { parseHostConfig } from '../../../../controller/backends/cloud-hypervisor/host-config.js';
import type { HostFacts } from '../../../../controller/backends/cloud-hypervisor/host/host-facts.js';

const config = parseHostConfig(
  `hostName: kvm1
imageDir: /img
vmm: { binary: /usr/bin/cloud-hypervisor }
storageClasses: { fast: /srv/fast, slow: /srv/slow }
networkClasses: { lan: br0, dmz: br1 }
capacity: { maxMemoryUsedPercent: 90, minStorageFreeGiB: 10 }
`,
  'test',
);
const facts: HostFacts = {
  unusable: [],
  cpus: 8,
  memoryMiB: 32768,
  memoryAvailableMiB: 16384,
  storage: { fast: { directory: '/srv/fast', freeGiB: 100 }, slow: { directory: '/srv/slow', freeGiB: 3 } },
  bridges: ['lan'],
  imageDirPresent: true,
};
const provider = (capabilities: Record<string, unknown>, endpoint = 'unix://kvm1/var/lib/banlieue/cloud-hypervisor'): Provider =>
  ({
    metadata: { name: 'kvm1-provider', namespace: 'vms' },
    spec: { providerClassRef: { name: 'cloud-hypervisor' }, connection: { endpoint }, capabilities },
  }) as unknown as Provider;

describe('Cloud Hypervisor discovery', () => {
  it('publishes one failure domain with the classes whose directory has room and whose bridge exists', () => {
    const { failureDomains } = toFailureDomains(
      provider({
        storageClasses: [{ name: 'fast' }, { name: 'archive', target: { hostClass: 'slow' } }],
        networkClasses: [{ name: 'lan', target: { bridge: 'br0' } }, { name: 'dmz' }],
      }),
      config,
      facts,
    );
    expect(failureDomains).toEqual([
      {
        name: 'kvm1-provider',
        labels: { name: 'kvm1-provider', host: 'kvm1' },
        attributes: {
          availableStorageClasses: ['fast'],
          availableNetworkClasses: ['lan'],
          raw: {
            host: 'kvm1',
            cpus: '8',
            memoryMiB: '32768',
            storageFreeGiB: 'fast=100,slow=3',
            nestedVirtualization: 'false',
            'storageClass.fast': 'fast',
            'networkClass.lan': 'lan',
          },
        },
        // Free memory is not published (it moves on every read); the class archive has too little room to be offered.
        capacity: { cpus: 8, memoryMiB: 32768, storage: [{ target: 'fast', freeGiB: 100 }] },
      },
    ]);
  });

  it('names the failure domain after a Provider named with 253 characters within 63, distinct from a Provider that shares its start', () => {
    const named = (name: string): string => {
      const long = { ...provider({}), metadata: { name, namespace: 'vms' } } as Provider;
      const [domain] = toFailureDomains(long, config, facts).failureDomains;
      expect(domain?.labels?.name).toBe(domain?.name);
      return domain?.name ?? '';
    };
    const a = named(`${'host.'.repeat(50)}abc`);
    expect(a).toMatch(/^(host\.){10}host-[0-9a-f]{8}$/);
    expect(named(`${'host.'.repeat(50)}abd`)).not.toBe(a);
  });

  it('withdraws the failure domain while memory is over the threshold', () => {
    const result = toFailureDomains(provider({ storageClasses: [{ name: 'fast' }] }), config, { ...facts, memoryAvailableMiB: 1024 });
    expect(result).toEqual({ failureDomains: [], withdrawn: 'memory 97% used, at or over capacity.maxMemoryUsedPercent 90' });
  });

  it('withdraws it when no storage class has room', () => {
    const full = { ...facts, storage: { fast: { directory: '/srv/fast', freeGiB: 2 } } };
    expect(toFailureDomains(provider({ storageClasses: [{ name: 'fast' }] }), config, full).withdrawn).toMatch(/no storage class has 10 GiB free/);
  });

  it('refuses a host that cannot run VMs, saying why', () => {
    expect(() => toFailureDomains(provider({}), config, { ...facts, unusable: ['/dev/kvm is missing'] })).toThrow(
      /host kvm1 cannot run VMs: \/dev\/kvm is missing/,
    );
  });

  it.each([
    [undefined, 'fast', 'fast'],
    [{ hostClass: 'slow' }, 'x', 'slow'],
    [{ path: '/srv/slow/' }, 'x', 'slow'],
    [{ path: '/etc' }, 'x', undefined],
    [{ hostClass: 'nope' }, 'x', undefined],
    [{ datastore: 'ds1' }, 'fast', undefined],
  ])('maps target %j of class %s to host class %s', (target, name, expected) => {
    expect(hostClassOf(target, name, config.storageClasses, 'path')).toBe(expected);
  });

  it('serves only a Provider whose endpoint names this host and state root', () => {
    expect(parseEndpoint('unix://kvm1/var/lib/x/')).toEqual({ host: 'kvm1', path: '/var/lib/x' });
    expect(parseEndpoint('unix:///var/lib/x')).toEqual({ path: '/var/lib/x' });
    expect(() => assertServes(provider({}), config)).not.toThrow();
    expect(() => assertServes(provider({}, 'unix:///var/lib/banlieue/cloud-hypervisor'), config)).not.toThrow();
    expect(() => assertServes(provider({}, 'unix://kvm2/var/lib/banlieue/cloud-hypervisor'), config)).toThrow(/names host kvm2; this is kvm1/);
    expect(() => assertServes(provider({}, 'unix:///run/banlieue'), config)).toThrow(/names state root \/run\/banlieue/);
  });
});
