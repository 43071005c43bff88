import { describe, expect, it } from 'vitest';
import {
  findDuplicateAddress,
  heldAddresses,
  type HeldAddress,
  type SiblingAddresses,
} from '../../../../controller/reconcilers/virtual-machine/static-addresses.js';
import { aStaticClass, aVm } from './fixtures.js';

const web1 = aVm({
  networkOverrides: [
    { name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } },
    { name: 'eth1', static: { address: '2001:db8::10', prefix: 64 } },
  ],
});

const sibling = (name: string, held: HeldAddress[]): SiblingAddresses => ({
  vm: aVm({}, { name, uid: `uid-${name}` }),
  heldAddresses: held,
});

describe('static addresses', () => {
  it('lists the address of each override with its class network', () => {
    expect(heldAddresses(web1, aStaticClass())).toEqual([
      { interface: 'eth0', networkClass: 'prod', address: '10.0.0.10' },
      { interface: 'eth1', networkClass: 'backup', address: '2001:db8::10' },
    ]);
  });

  it('holds nothing for a DHCP VM or an override naming no class interface', () => {
    expect(heldAddresses(aVm(), aStaticClass())).toEqual([]);
    expect(heldAddresses(aVm({ networkOverrides: [{ name: 'eth9', static: { address: '10.0.0.9', prefix: 24 } }] }), aStaticClass())).toEqual([]);
  });

  it.each<[string, SiblingAddresses[], string | undefined]>([
    ['no sibling holds anything', [sibling('web-2', [])], undefined],
    ['a sibling holds the address on another network class', [sibling('web-2', [{ interface: 'eth0', networkClass: 'lab', address: '10.0.0.10' }])], undefined],
    ['a sibling holds another address on the class', [sibling('web-2', [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.11' }])], undefined],
    [
      'a sibling holds the IPv4 address on the class',
      [sibling('web-2', []), sibling('web-3', [{ interface: 'nic0', networkClass: 'prod', address: '10.0.0.10' }])],
      'spec.networkOverrides "eth0" address 10.0.0.10 on network class "prod" is already held by VirtualMachine "web-3"',
    ],
    [
      'a sibling holds the IPv6 address spelled in upper case',
      [sibling('web-2', [{ interface: 'eth1', networkClass: 'backup', address: '2001:DB8::10' }])],
      'spec.networkOverrides "eth1" address 2001:db8::10 on network class "backup" is already held by VirtualMachine "web-2"',
    ],
    // One IPv6 address spelled three ways is one address: only one VM may hold it.
    [
      'a sibling holds the IPv6 address with its zeros written out',
      [sibling('web-2', [{ interface: 'eth1', networkClass: 'backup', address: '2001:0db8:0000:0000:0000:0000:0000:0010' }])],
      'spec.networkOverrides "eth1" address 2001:db8::10 on network class "backup" is already held by VirtualMachine "web-2"',
    ],
    [
      'a sibling holds the IPv6 address compressed elsewhere',
      [sibling('web-2', [{ interface: 'eth1', networkClass: 'backup', address: '2001:DB8:0:0::0:10' }])],
      'spec.networkOverrides "eth1" address 2001:db8::10 on network class "backup" is already held by VirtualMachine "web-2"',
    ],
    ['the VM itself is among the siblings', [{ vm: web1, heldAddresses: [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.10' }] }], undefined],
  ])('reports a duplicate when %s', (_, siblings, message) => {
    expect(findDuplicateAddress(web1, aStaticClass(), siblings)?.message).toBe(message);
  });

  it('reports the first clash with the holder and the claim', () => {
    const siblings = [
      sibling('web-2', [{ interface: 'eth1', networkClass: 'backup', address: '2001:db8::10' }]),
      sibling('web-3', [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.10' }]),
    ];
    expect(findDuplicateAddress(web1, aStaticClass(), siblings)).toMatchObject({
      interface: 'eth0',
      networkClass: 'prod',
      address: '10.0.0.10',
      heldBy: 'web-3',
    });
  });

  it('tells the VM apart from a same-named sibling by namespace when uids are absent', () => {
    const vm = aVm({ networkOverrides: [{ name: 'eth0', static: { address: '10.0.0.10', prefix: 24 } }] }, { uid: undefined });
    const other = { vm: aVm({}, { uid: undefined, namespace: 'team-b' }), heldAddresses: [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.10' }] };
    const self = { vm: aVm({}, { uid: undefined }), heldAddresses: [{ interface: 'eth0', networkClass: 'prod', address: '10.0.0.10' }] };
    expect(findDuplicateAddress(vm, aStaticClass(), [self])).toBeUndefined();
    expect(findDuplicateAddress(vm, aStaticClass(), [other])?.heldBy).toBe('web-1');
  });
});
