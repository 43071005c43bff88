// The Lease a role shard leads on: one per role and selector (ADR 33).
import { describe, expect, it } from 'vitest';
import { shardLeaseName } from '../../../controller/cli/shard-lease.js';
import { parseSelector } from '../../../infra/api/label-syntax.js';

describe('role shard Leases', () => {
  const name = shardLeaseName('banlieue-provider-vsphere', parseSelector('shard in (a,b),region=eu'));

  it('names a DNS-safe Lease after the role and a hash of the selector', () => {
    expect(name).toMatch(/^banlieue-provider-vsphere-shard-[0-9a-f]{10}$/);
  });

  it('names the same Lease for every spelling of one selector', () => {
    expect(shardLeaseName('banlieue-provider-vsphere', parseSelector(' region == eu , shard in (b, a, a)'))).toBe(name);
    expect(shardLeaseName('banlieue-provider-vsphere', parseSelector('shard in (b,a),region in (eu)'))).toBe(name);
  });

  it.each([
    ['another selector', 'banlieue-provider-vsphere', 'shard in (a,b)'],
    ['another backend', 'banlieue-provider-proxmox', 'shard in (a,b),region=eu'],
    ['the controller', 'banlieue-controller', 'shard in (a,b),region=eu'],
  ])('names another Lease for %s', (_why, role, selector) => {
    expect(shardLeaseName(role, parseSelector(selector))).not.toBe(name);
  });

  it('stays within an object name for a long role Lease', () => {
    expect(shardLeaseName(`banlieue-provider-${'x'.repeat(260)}`, parseSelector('a=b')).length).toBeLessThanOrEqual(253);
  });
});
