import { describe, expect, it } from 'vitest';
import { decideFaultPlan, type FaultPlanProps } from '../../faults/fault-plan.js';
import { SeededRandom } from '../../support/seeded-random.js';

const props: FaultPlanProps = {
  names: Array.from({ length: 30 }, (_, i) => `vm-${i}`),
  deletions: 10,
  kills: 12,
  outageMs: 20_000,
  gapMs: [1_000, 4_000],
  leaderShare: 0.7,
};

describe('fault plan', () => {
  it('is the same plan for the same seed, and another for another seed', () => {
    expect(decideFaultPlan(new SeededRandom(7), props)).toEqual(decideFaultPlan(new SeededRandom(7), props));
    expect(decideFaultPlan(new SeededRandom(7), props)).not.toEqual(decideFaultPlan(new SeededRandom(8), props));
  });

  it.each([1, 2, 3, 1515, 4_294_967_295])('with seed %i, has every kill, one deletion of distinct names and both outages, deletion first', (seed) => {
    const plan = decideFaultPlan(new SeededRandom(seed), props);
    const kinds = plan.map((s) => s.kind);
    expect(kinds.filter((k) => k === 'kill')).toHaveLength(12);
    expect(kinds.filter((k) => k === 'apiserver-outage')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'backend-outage')).toHaveLength(1);
    const deletion = plan.find((s) => s.kind === 'delete');
    expect(deletion?.kind === 'delete' && new Set(deletion.names).size).toBe(10);
    expect(kinds.indexOf('delete')).toBeLessThan(kinds.indexOf('apiserver-outage'));
    expect(kinds.indexOf('apiserver-outage')).toBeLessThan(kinds.indexOf('backend-outage'));
    for (const step of plan) expect(step.afterMs).toBeGreaterThanOrEqual(1_000);
  });
});

describe('seeded random', () => {
  it('stays within the bounds asked', () => {
    const random = new SeededRandom(42);
    const draws = Array.from({ length: 1000 }, () => random.int(3, 5));
    expect(new Set(draws)).toEqual(new Set([3, 4, 5]));
  });
});
