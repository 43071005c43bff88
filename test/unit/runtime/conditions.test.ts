import { describe, expect, it } from 'vitest';
import { setCondition, setConditions } from '../../../controller/runtime/conditions.js';
import { Reason } from '../../../infra/api/conditions.js';

const t0 = new Date('2026-01-01T00:00:00.500Z');
const t1 = new Date('2026-01-01T01:00:00Z');

describe('conditions', () => {
  it('keeps lastTransitionTime while the status stays the same, and moves it when it changes', () => {
    const first = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending', message: 'a' }, t0);
    expect(first[0]?.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
    const same = setCondition(first, { type: 'Ready', status: 'False', reason: Reason.Reconciled, message: 'b' }, t1);
    expect(same[0]).toMatchObject({ reason: 'Reconciled', message: 'b', lastTransitionTime: '2026-01-01T00:00:00Z' });
    const flipped = setCondition(same, { type: 'Ready', status: 'True', reason: 'Reconciled' }, t1);
    expect(flipped[0]).toMatchObject({ status: 'True', message: '', lastTransitionTime: '2026-01-01T01:00:00Z' });
  });

  it('leaves other types alone and appends new ones in order', () => {
    const list = setConditions(
      [],
      [
        { type: 'Scheduled', status: 'True', reason: 'Scheduled' },
        { type: 'Ready', status: 'False', reason: 'Pending' },
      ],
      t0,
    );
    const updated = setCondition(list, { type: 'Paused', status: 'False', reason: 'NotPaused' }, t1);
    expect(updated.map((c) => c.type)).toEqual(['Scheduled', 'Ready', 'Paused']);
    expect(updated[0]).toEqual(list[0]);
  });
});
