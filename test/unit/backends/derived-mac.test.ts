import { describe, expect, it } from 'vitest';
import { derivedMac } from '../../../controller/backends/derived-mac.js';

describe('derivedMac', () => {
  it('keeps the prefix and fills six bytes from the seed, the same every time', () => {
    const a = derivedMac('02', 'uuid/eth0');
    expect(a).toMatch(/^02(:[0-9a-f]{2}){5}$/);
    expect(derivedMac('02', 'uuid/eth0')).toBe(a);
    expect(derivedMac('02', 'uuid/eth1')).not.toBe(a);
    expect(derivedMac('BC:24:11', 'uuid/eth0')).toMatch(/^bc:24:11(:[0-9a-f]{2}){3}$/);
    // The hash bytes follow the prefix: a longer prefix keeps the seed's first bytes.
    expect(derivedMac('bc:24:11', 'uuid/eth0').slice(9)).toBe(a.slice(3, 11));
  });

  it('refuses a prefix that is not whole bytes, or leaves no room for the seed', () => {
    expect(() => derivedMac('2', 's')).toThrow(/prefix "2"/);
    expect(() => derivedMac('02:00:00:00:00:00', 's')).toThrow(/1-5 bytes/);
  });
});
