import { describe, expect, it } from 'vitest';
import { checkFleet, type FleetObject } from '../../faults/fleet-check.js';

const ready = (name: string, uuid: string): FleetObject => ({ name, uid: `uid-${name}`, deleting: false, finalizers: ['f'], ready: true, uuid });

describe('fault run fleet check', () => {
  it('counts nothing amiss when the backend holds exactly the kept machines', () => {
    const report = checkFleet(
      { kept: ['a', 'b'], deleted: ['c'] },
      [ready('a', 'u1'), ready('b', 'u2')],
      [ready('a', 'u1'), ready('b', 'u2')],
      [
        { name: 'a', uuid: 'u1' },
        { name: 'b', uuid: 'u2' },
      ],
    );
    expect(report).toMatchObject({ expected: 2, found: 2, duplicates: 0, orphans: 0, stuckFinalizers: 0, notReady: [], notGone: [] });
  });

  it('counts a second VM of one machine (same UUID or same name) as a duplicate, and a VM of a deleted machine as an orphan', () => {
    const backend = [
      { name: 'a', uuid: 'u1' },
      { name: 'a', uuid: 'u9' },
      { name: 'b', uuid: 'u2' },
      { name: 'b-copy', uuid: 'u2' },
      { name: 'c', uuid: 'u3' },
    ];
    const report = checkFleet({ kept: ['a', 'b'], deleted: ['c'] }, [ready('a', 'u1'), ready('b', 'u2')], [ready('a', 'u1'), ready('b', 'u2')], backend);
    expect(report).toMatchObject({ found: 2, duplicates: 2, orphans: 1 });
  });

  it('reports a deleted object that keeps its finalizer as stuck and not gone, and a kept VM not Ready', () => {
    const deleting: FleetObject = { name: 'c', uid: 'uid-c', deleting: true, finalizers: ['banlieue.io/machine'], ready: false };
    const report = checkFleet(
      { kept: ['a'], deleted: ['c'] },
      [{ ...ready('a', 'u1'), ready: false }],
      [ready('a', 'u1'), deleting],
      [{ name: 'a', uuid: 'u1' }],
    );
    expect(report).toMatchObject({ stuckFinalizers: 1, notReady: ['a'], notGone: ['machine c'] });
  });
});
