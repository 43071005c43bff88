// NIC MACs of a LibvirtMachine (pure): derived from the UUID and NIC name, stable, unicast, locally administered.
import { describe, expect, it } from 'vitest';
import { derivedMac, macOf } from '../../../../controller/backends/libvirt/machine/mac-address.js';

const UUID = '6f1c1e0a-1b2c-5d3e-8f40-123456789abc';

describe('LibvirtMachine MAC addresses', () => {
  it('derives the same locally administered unicast MAC for the same UUID and NIC, another for another NIC or machine', () => {
    const mac = derivedMac(UUID, 'eth0');
    expect(mac).toMatch(/^02(:[0-9a-f]{2}){5}$/);
    expect(derivedMac(UUID.toUpperCase(), 'eth0')).toBe(mac);
    expect(derivedMac(UUID, 'eth1')).not.toBe(mac);
    expect(derivedMac('7f1c1e0a-1b2c-5d3e-8f40-123456789abc', 'eth0')).not.toBe(mac);
  });

  it('takes the spec’s MAC, lower-cased, when it has one', () => {
    expect(macOf(UUID, { name: 'eth0', macAddress: '52:54:00:0A:0B:0C' })).toBe('52:54:00:0a:0b:0c');
    expect(macOf(UUID, { name: 'eth0' })).toBe(derivedMac(UUID, 'eth0'));
  });
});
