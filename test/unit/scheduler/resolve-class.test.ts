import { describe, expect, it } from 'vitest';
import type { StorageClassCapability } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { resolveClass, resolveNetworks, resolveStorage } from '../../../controller/scheduler/resolve-class.js';
import { failureDomain, provider, vsphereDomain } from './fixtures.js';

const dc1c1 = vsphereDomain('vcenter-a', 'dc1', 'c1');
const dc2c1 = vsphereDomain('vcenter-a', 'dc2', 'c1');
const dc2c2 = vsphereDomain('vcenter-a', 'dc2', 'c2');
const noRaw = failureDomain('kvm1');

const fast: StorageClassCapability = {
  name: 'fast',
  target: { datastore: 'ds-ssd' },
  perZone: [
    { datacenter: 'dc2', cluster: 'c2', target: { datastore: 'ds-dc2-c2-ssd' } },
    { datacenter: 'dc2', target: { datastore: 'ds-dc2-ssd' } },
  ],
};

describe('Class resolution', () => {
  it.each([
    ['the class target when no zone matches', [fast], 'fast', dc1c1, 'ds-ssd'],
    ['the first zone whose datacenter and cluster both match', [fast], 'fast', dc2c2, 'ds-dc2-c2-ssd'],
    ['a zone that sets only the datacenter, for any cluster in it', [fast], 'fast', dc2c1, 'ds-dc2-ssd'],
    ['the class target for a domain without raw facts', [fast], 'fast', noRaw, 'ds-ssd'],
    [
      'a zone setting neither datacenter nor cluster, everywhere',
      [{ name: 'fast', target: { datastore: 'ds-ssd' }, perZone: [{ target: { datastore: 'ds-any' } }] }],
      'fast',
      dc1c1,
      'ds-any',
    ],
    ['the first target value by key', [{ name: 'lan', target: { vlan: '100', bridge: 'br0' } }], 'lan', noRaw, 'br0'],
    ['the class name for a class without a target', [{ name: 'local' }], 'local', noRaw, 'local'],
    ['the class name for an empty target', [{ name: 'local', target: {} }], 'local', noRaw, 'local'],
    ['the class name for a class the Provider does not offer', [fast], 'bulk', dc1c1, 'bulk'],
    ['the class name when the Provider offers no classes', undefined, 'fast', dc1c1, 'fast'],
  ] satisfies [string, StorageClassCapability[] | undefined, string, typeof dc1c1, string][])('resolves to %s', (_, offered, className, domain, backendId) => {
    expect(resolveClass(offered, className, domain)).toEqual({ className, backendId });
  });

  it('resolves every disk and interface of a class in order, per zone', () => {
    const vcenter = provider('vcenter-a');
    const disks = [
      { name: 'os', sizeGiB: 40, storageClass: 'fast' },
      { name: 'data1', sizeGiB: 100, storageClass: 'standard' },
    ];
    const nics = [
      { name: 'eth0', networkClass: 'backup' },
      { name: 'eth1', networkClass: 'prod' },
    ];
    expect(resolveStorage(vcenter, disks, dc2c1)).toEqual([
      { className: 'fast', backendId: 'ds-dc2-ssd' },
      { className: 'standard', backendId: 'ds-hdd' },
    ]);
    expect(resolveNetworks(vcenter, nics, dc2c1)).toEqual([
      { className: 'backup', backendId: 'dvpg-backup' },
      { className: 'prod', backendId: 'pg-prod' },
    ]);
  });
});
