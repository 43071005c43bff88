// Addresses of a libvirt domain (pure part): its own NICs' addresses, without loopback and link-local ones.
import { describe, expect, it } from 'vitest';
import { usableAddresses } from '../../../../controller/backends/libvirt/machine/addresses.js';

describe('libvirt domain addresses', () => {
  it('keeps the addresses of the machine’s MACs (any when the source names none), dropping loopback and link-local', () => {
    const found = usableAddresses(
      [
        { name: 'lo', mac: '00:00:00:00:00:00', addresses: [{ type: 'ipv4', address: '127.0.0.1', prefix: 8 }] },
        {
          name: 'eth0',
          mac: '02:AA:BB:CC:DD:EE',
          addresses: [
            { type: 'ipv4', address: '10.200.0.101', prefix: 24 },
            { type: 'ipv6', address: 'fe80::1', prefix: 64 },
            { type: 'ipv6', address: '2001:DB8::5', prefix: 64 },
          ],
        },
        { name: 'docker0', mac: '02:42:00:00:00:01', addresses: [{ type: 'ipv4', address: '172.17.0.1', prefix: 16 }] },
        {
          name: 'vnet3',
          mac: undefined,
          addresses: [
            { type: 'ipv4', address: '169.254.1.1', prefix: 16 },
            { type: 'ipv4', address: '10.200.0.101', prefix: 24 },
          ],
        },
      ],
      ['02:aa:bb:cc:dd:ee'],
    );
    expect(found).toEqual([
      { type: 'InternalIP', address: '10.200.0.101' },
      { type: 'InternalIP', address: '2001:db8::5' },
    ]);
  });
});
