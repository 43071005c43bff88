// A machine's addresses: static ones from its spec, else the neighbour table matched by MAC on the NIC's bridge.
import { describe, expect, it } from 'vitest';
import { toAddresses } from '../../../../controller/backends/cloud-hypervisor/machine/addresses.js';
import type { Neighbour } from '../../../../controller/backends/cloud-hypervisor/host/ip-links.js';

const MAC = '02:aa:bb:cc:dd:ee';
const neighbour = (address: string, extra: Partial<Neighbour> = {}): Neighbour => ({ address, mac: MAC, device: 'br0', state: ['REACHABLE'], ...extra });

describe('machine addresses', () => {
  it('takes the static addresses when every NIC has one', () => {
    expect(toAddresses([{ mac: MAC, bridge: 'br0', staticAddress: '10.0.0.5' }], [neighbour('10.0.0.99')])).toEqual({
      addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
      source: 'static',
    });
  });

  it.each([
    ['a reachable entry on the bridge', [neighbour('10.0.0.7')], ['10.0.0.7']],
    ['a stale one too (the guest answered once)', [neighbour('10.0.0.7', { state: ['STALE'] })], ['10.0.0.7']],
    ['the MAC in upper case', [neighbour('10.0.0.7', { mac: MAC })], ['10.0.0.7']],
    ['not a failed or incomplete entry', [neighbour('10.0.0.7', { state: ['FAILED'] }), neighbour('10.0.0.8', { state: ['INCOMPLETE'] })], []],
    ['not another MAC', [neighbour('10.0.0.7', { mac: '02:00:00:00:00:01' })], []],
    ['not another bridge', [neighbour('10.0.0.7', { device: 'br1' })], []],
    ['not a link-local address', [neighbour('fe80::1'), neighbour('169.254.3.4'), neighbour('fd00::7')], ['fd00::7']],
  ])('matches the neighbour table by MAC: %s', (_what, neighbours, expected) => {
    const result = toAddresses([{ mac: MAC.toUpperCase(), bridge: 'br0' }], neighbours);
    expect(result).toEqual({ addresses: expected.map((address) => ({ type: 'InternalIP', address })), source: 'neighbour' });
  });
});
