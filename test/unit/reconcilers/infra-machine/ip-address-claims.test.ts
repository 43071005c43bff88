// decidePoolClaims and withClaimedAddresses: which IPAddressClaims a machine's
// NICs ask for, and the spec a backend gets once they are bound.
import { describe, expect, it } from 'vitest';
import { decidePoolClaims, withClaimedAddresses } from '../../../../controller/reconcilers/infra-machine/ip-address-claims.js';

const POOL_V4 = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'nodes' };
const POOL_MGMT = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'GlobalInClusterIPPool', name: 'mgmt' };

describe('IPAddressClaims of a machine', () => {
  it.each([
    ['a spec without NICs', { cpus: 2 }],
    ['NICs on DHCP', { network: [{ name: 'eth0' }, { name: 'eth1', ipam: {} }] }],
    ['NICs with static addresses', { nics: [{ name: 'eth0', ipam: { static: { address: '10.0.0.5', prefix: 24 } } }] }],
  ])('asks for none with %s', (_, spec) => {
    expect(decidePoolClaims('web-1', spec)).toEqual([]);
  });

  it('names each claim <machine>-<nic index>-<pool index>, whichever field holds the NICs', () => {
    const spec = {
      nics: [{ name: 'eth0', ipam: { addressesFromPools: [POOL_V4] } }, { name: 'eth1' }, { name: 'eth2', ipam: { addressesFromPools: [POOL_MGMT] } }],
    };
    expect(decidePoolClaims('web-1', spec)).toEqual([
      { name: 'web-1-0-0', nicIndex: 0, pool: POOL_V4, at: 'spec.nics[0].ipam.addressesFromPools[0]' },
      { name: 'web-1-2-0', nicIndex: 2, pool: POOL_MGMT, at: 'spec.nics[2].ipam.addressesFromPools[0]' },
    ]);
    expect(decidePoolClaims('db', { network: spec.nics }).map((c) => c.at)).toEqual([
      'spec.network[0].ipam.addressesFromPools[0]',
      'spec.network[2].ipam.addressesFromPools[0]',
    ]);
  });

  it('names the claims of a machine named with 253 characters within 253, each its own', () => {
    const spec = { nics: [{ name: 'eth0', ipam: { addressesFromPools: [POOL_V4, POOL_MGMT] } }] };
    const names = decidePoolClaims('m'.repeat(253), spec).map((c) => c.name);
    expect(names).toHaveLength(2);
    for (const name of names) expect(name.length).toBeLessThanOrEqual(253);
    expect(new Set(names).size).toBe(2);
  });

  it('gives the backend each pooled NIC with its bound address as a static one, and leaves the other NICs as they are', () => {
    const spec = {
      cpus: 2,
      network: [
        { name: 'eth0', ipam: { addressesFromPools: [POOL_V4] } },
        { name: 'eth1', macAddress: '00:50:56:00:00:01' },
      ],
    };
    const bound = new Map([[0, { address: '10.0.0.15', prefix: 24, gateway: '10.0.0.1' }]]);
    expect(withClaimedAddresses(spec, bound)).toEqual({
      cpus: 2,
      network: [
        { name: 'eth0', ipam: { static: { address: '10.0.0.15', prefix: 24, gateway: '10.0.0.1' } } },
        { name: 'eth1', macAddress: '00:50:56:00:00:01' },
      ],
    });
    // The machine's own spec is not touched.
    expect(spec.network[0]).toEqual({ name: 'eth0', ipam: { addressesFromPools: [POOL_V4] } });
  });
});
