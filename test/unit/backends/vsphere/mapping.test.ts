// toFailureDomains / failureDomainName (upstream-backends §1.2): naming,
// overrides, truncation, class availability per target key, sorting, duplicates.
import { describe, expect, it } from 'vitest';
import type { Provider, ProviderSpec } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { failureDomainName, toFailureDomains, type ClusterInventory } from '../../../../controller/backends/vsphere/mapping.js';

type Capabilities = NonNullable<ProviderSpec['capabilities']>;

function provider(name: string, extra: Partial<ProviderSpec> = {}): Provider {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: 'team-a' },
    spec: {
      providerClassRef: { name: 'vsphere' },
      connection: { endpoint: 'https://vcenter.example.com/sdk', credentialsRef: { name: `${name}-credentials` } },
      ...extra,
    },
  };
}

function zone(datacenter: string, cluster: string, extra: Partial<ClusterInventory> = {}): ClusterInventory {
  return {
    datacenter,
    cluster,
    datastores: [{ name: 'ds-local' }, { name: 'ds-fast-1', storagePod: 'pod-fast' }],
    networks: [
      { name: 'VM Network', distributed: false },
      { name: 'dvpg-prod', distributed: true },
    ],
    ...extra,
  };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** FNV-1a 32 written out independently of the code under test. */
function fnv1a(text: string): string {
  let h = 2166136261;
  for (const b of Buffer.from(text, 'utf8')) h = Number((BigInt(h ^ b) * 16777619n) % 4294967296n);
  return (h >>> 0).toString(16).padStart(8, '0');
}

describe('failureDomainName', () => {
  const overrides = {
    failureDomainNameOverrides: [
      { cluster: 'C1', name: 'any-dc-c1' },
      { datacenter: 'DC0', cluster: 'C1', name: 'Zone_A' },
      { datacenter: 'DC9', cluster: 'C2', name: 'other-dc' },
    ],
  };
  it.each([
    ['slug of provider, datacenter and cluster', provider('vc'), 'DC0', 'Cluster 1', 'vc-dc0-cluster-1'],
    ['runs of other characters become one dash, trimmed', provider('vc'), '__DC.0__', 'C@@1--', 'vc-dc-0-c-1'],
    ['override for datacenter + cluster wins over cluster only (and is slugified)', provider('vc', overrides), 'DC0', 'C1', 'zone-a'],
    ['override without datacenter matches any datacenter', provider('vc', overrides), 'DC5', 'C1', 'any-dc-c1'],
    ['override for another datacenter does not apply', provider('vc', overrides), 'DC0', 'C2', 'vc-dc0-c2'],
  ])('%s', (_title, p, dc, cluster, expected) => {
    expect(failureDomainName(p, dc, cluster)).toBe(expected);
  });

  it('is exactly the slug at 63 characters', () => {
    const cluster = 'c'.repeat(63 - 'vc-dc0-'.length);
    expect(failureDomainName(provider('vc'), 'DC0', cluster)).toBe(`vc-dc0-${cluster}`);
  });

  it('cuts a longer slug and appends -<fnv1a32 hex8> of the full slug', () => {
    const cluster = 'Cluster-'.repeat(10);
    const full = `vc-dc0-${'cluster-'.repeat(10)}`.replace(/-$/, '');
    const name = failureDomainName(provider('vc'), 'DC0', cluster);

    expect(name).toHaveLength(63);
    expect(name).toMatch(DNS_LABEL);
    expect(name).toBe(`${full.slice(0, 54)}-${fnv1a(full)}`);
    expect(failureDomainName(provider('vc'), 'DC0', cluster)).toBe(name);
    expect(failureDomainName(provider('vc'), 'DC0', `${cluster}x`)).not.toBe(name);
  });

  it('drops a dash left at the cut before the hash', () => {
    // The 54th character of the slug is a dash.
    const name = failureDomainName(provider('vc'), 'DC0', `${'a'.repeat(46)}-${'b'.repeat(30)}`);
    expect(name).toMatch(DNS_LABEL);
    expect(name).not.toContain('--');
    expect(name.length).toBeLessThanOrEqual(63);
  });
});

describe('toFailureDomains', () => {
  it('publishes a cluster’s room for VMs in the common capacity shape, rounded down to whole GiB, when discovery read it', () => {
    const p = provider('vc');
    const capacity = {
      cpus: 24,
      memoryBytes: 256.4 * 1024 ** 3,
      freeMemoryBytes: 100.9 * 1024 ** 3,
      storage: [{ target: 'ds1', freeBytes: 10.5 * 1024 ** 3 }],
    };
    const [fd] = toFailureDomains(p, [zone('DC0', 'C0', { capacity })]);
    expect(fd?.capacity).toEqual({ cpus: 24, memoryMiB: 256 * 1024, freeMemoryMiB: 100 * 1024, storage: [{ target: 'ds1', freeGiB: 10 }] });
    expect(toFailureDomains(p, [zone('DC0', 'C0')])[0]?.capacity).toBeUndefined();
  });

  it('publishes one domain per cluster with labels, raw and features, sorted by name', () => {
    const p = provider('vc', { capabilities: { features: ['vtpm', 'efiSecureBoot'] } });
    const domains = toFailureDomains(p, [zone('DC1', 'C0'), zone('DC0', 'C1', { resourcePool: 'Resources' }), zone('DC0', 'C0')]);

    expect(domains.map((d) => d.name)).toEqual(['vc-dc0-c0', 'vc-dc0-c1', 'vc-dc1-c0']);
    expect(domains[1]).toEqual({
      name: 'vc-dc0-c1',
      labels: { name: 'vc-dc0-c1', datacenter: 'DC0', cluster: 'C1' },
      attributes: {
        availableStorageClasses: [],
        availableNetworkClasses: [],
        features: ['vtpm', 'efiSecureBoot'],
        raw: { datacenter: 'DC0', cluster: 'C1', resourcePool: 'Resources' },
      },
    });
    expect(domains[0]?.attributes?.raw).toEqual({ datacenter: 'DC0', cluster: 'C0' });
  });

  it('leaves features out when the Provider declares none', () => {
    const [domain] = toFailureDomains(provider('vc'), [zone('DC0', 'C0')]);
    expect(domain?.attributes).not.toHaveProperty('features');
  });

  const storage: [string, NonNullable<Capabilities['storageClasses']>, string[]][] = [
    [
      'datastore: exact name',
      [
        { name: 'a', target: { datastore: 'ds-local' } },
        { name: 'b', target: { datastore: 'DS-LOCAL' } },
      ],
      ['a'],
    ],
    [
      'datastoreCluster: the StoragePod name',
      [
        { name: 'a', target: { datastoreCluster: 'pod-fast' } },
        { name: 'b', target: { datastoreCluster: 'ds-local' } },
      ],
      ['a'],
    ],
    ['datastore is not matched by a StoragePod name', [{ name: 'a', target: { datastore: 'pod-fast' } }], []],
    [
      'tagCategory / tag: unsupported',
      [
        { name: 'a', target: { tagCategory: 'tier', tag: 'gold' } },
        { name: 'b', target: { tag: 'gold' } },
      ],
      [],
    ],
    ['no target: unavailable', [{ name: 'a' }], []],
    ['every key must match', [{ name: 'a', target: { datastore: 'ds-local', tag: 'gold' } }], []],
    [
      'perZone for this datacenter + cluster wins over target',
      [{ name: 'a', target: { datastore: 'missing' }, perZone: [{ datacenter: 'DC0', cluster: 'C0', target: { datastore: 'ds-local' } }] }],
      ['a'],
    ],
    [
      'perZone for this cluster (any datacenter) wins over target',
      [{ name: 'a', target: { datastore: 'ds-local' }, perZone: [{ cluster: 'C0', target: { datastore: 'missing' } }] }],
      [],
    ],
    [
      'perZone for another zone does not apply',
      [{ name: 'a', target: { datastore: 'ds-local' }, perZone: [{ datacenter: 'DC1', cluster: 'C0', target: { datastore: 'missing' } }] }],
      ['a'],
    ],
    [
      'the most specific perZone entry wins',
      [
        {
          name: 'a',
          perZone: [
            { datacenter: 'DC0', target: { datastore: 'missing' } },
            { datacenter: 'DC0', cluster: 'C0', target: { datastore: 'ds-local' } },
          ],
        },
      ],
      ['a'],
    ],
  ];
  it.each(storage)('storage class %s', (_title, storageClasses, expected) => {
    const [domain] = toFailureDomains(provider('vc', { capabilities: { storageClasses } }), [zone('DC0', 'C0')]);
    expect(domain?.attributes?.availableStorageClasses).toEqual(expected);
  });

  const networks: [string, NonNullable<Capabilities['networkClasses']>, string[]][] = [
    [
      'portGroup: a standard network',
      [
        { name: 'a', target: { portGroup: 'VM Network' } },
        { name: 'b', target: { portGroup: 'dvpg-prod' } },
      ],
      ['a'],
    ],
    [
      'distributedPortGroup: a distributed port group',
      [
        { name: 'a', target: { distributedPortGroup: 'dvpg-prod' } },
        { name: 'b', target: { distributedPortGroup: 'VM Network' } },
      ],
      ['a'],
    ],
    ['unknown key: unavailable', [{ name: 'a', target: { network: 'VM Network' } }], []],
    [
      'perZone wins over target',
      [{ name: 'a', target: { portGroup: 'VM Network' }, perZone: [{ datacenter: 'DC0', cluster: 'C0', target: { portGroup: 'gone' } }] }],
      [],
    ],
  ];
  it.each(networks)('network class %s', (_title, networkClasses, expected) => {
    const [domain] = toFailureDomains(provider('vc', { capabilities: { networkClasses } }), [zone('DC0', 'C0')]);
    expect(domain?.attributes?.availableNetworkClasses).toEqual(expected);
  });

  it('judges availability per cluster', () => {
    const p = provider('vc', { capabilities: { storageClasses: [{ name: 'fast', target: { datastore: 'ds-only-c1' } }] } });
    const domains = toFailureDomains(p, [zone('DC0', 'C0'), zone('DC0', 'C1', { datastores: [{ name: 'ds-only-c1' }] })]);
    expect(domains.map((d) => [d.name, d.attributes?.availableStorageClasses])).toEqual([
      ['vc-dc0-c0', []],
      ['vc-dc0-c1', ['fast']],
    ]);
  });

  it.each([
    ['two clusters whose slugs collide', provider('vc'), [zone('DC0', 'C_1'), zone('DC0', 'c-1')], 'vc-dc0-c-1'],
    [
      'an override equal to another generated name',
      provider('vc', { failureDomainNameOverrides: [{ cluster: 'C9', name: 'vc-dc0-c0' }] }),
      [zone('DC0', 'C0'), zone('DC0', 'C9')],
      'vc-dc0-c0',
    ],
  ])('throws naming the duplicate: %s', (_title, p, inventory, duplicate) => {
    expect(() => toFailureDomains(p, inventory)).toThrow(new RegExp(`duplicate failure domain name ${duplicate}\\b`));
  });

  it('returns nothing for no clusters', () => {
    expect(toFailureDomains(provider('vc'), [])).toEqual([]);
  });
});
