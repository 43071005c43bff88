// Tap names and MACs derived from the machine UUID: stable, short enough, locally administered.
import { describe, expect, it } from 'vitest';
import { derivedMac, macOf, tapName } from '../../../../controller/backends/cloud-hypervisor/machine/nic-identity.js';

const UUID = '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b';

describe('NIC identity from the machine UUID', () => {
  it('names taps bch<10 hex of the UUID><index>, within 15 bytes', () => {
    expect(tapName(UUID, 0)).toBe('bch6f1c2b3a4d0');
    expect(tapName(UUID, 15)).toBe('bch6f1c2b3a4df');
    expect(tapName(UUID, 15).length).toBeLessThanOrEqual(15);
    expect(() => tapName(UUID, 16)).toThrow(/NIC index 16/);
  });

  it('derives a stable, locally administered unicast MAC per NIC', () => {
    const mac = derivedMac(UUID, 0);
    expect(mac).toMatch(/^02(:[0-9a-f]{2}){5}$/);
    expect(derivedMac(UUID, 0)).toBe(mac);
    expect(derivedMac(UUID, 1)).not.toBe(mac);
    expect(derivedMac('00000000-0000-4000-8000-000000000000', 0)).not.toBe(mac);
  });

  it("keeps the spec's MAC, lower-cased", () => {
    expect(macOf(UUID, 0, '52:54:00:AB:CD:EF')).toBe('52:54:00:ab:cd:ef');
    expect(macOf(UUID, 0, undefined)).toBe(derivedMac(UUID, 0));
  });
});
