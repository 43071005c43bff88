import { describe, expect, it } from 'vitest';
import { checkLeaseWriters, type AuditRecord } from '../../faults/lease-writers.js';

const role = { namespace: 'ns', lease: 'banlieue-controller', users: ['a', 'b'] };
const t = (s: number): string => `2026-01-01T00:00:${String(s).padStart(2, '0')}.000000Z`;
const leaseWrite = (user: string, s: number, code = 200): AuditRecord => ({
  stage: 'ResponseComplete',
  verb: 'update',
  user: { username: user },
  objectRef: { apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: 'ns', name: 'banlieue-controller' },
  responseStatus: { code },
  requestReceivedTimestamp: t(s),
  stageTimestamp: t(s),
});
const vmWrite = (user: string, s: number): AuditRecord => ({
  stage: 'ResponseComplete',
  verb: 'patch',
  user: { username: user },
  objectRef: { apiGroup: 'banlieue.io', resource: 'virtualmachines', subresource: 'status', namespace: 'ns', name: 'vm' },
  responseStatus: { code: 200 },
  requestReceivedTimestamp: t(s),
  stageTimestamp: t(s + 1),
});

describe('never two writers, from the audit log', () => {
  it('accepts writes by the holder of the moment across a failover, and counts the failover', () => {
    const history = checkLeaseWriters([leaseWrite('a', 1), vmWrite('a', 2), leaseWrite('a', 5), leaseWrite('b', 20), vmWrite('b', 21)], role);
    expect(history).toEqual({ failovers: 1, secondWriters: [], writesChecked: 2 });
  });

  it('names a write received after the Lease went to the other replica, and ignores failed Lease writes', () => {
    const history = checkLeaseWriters([leaseWrite('a', 1), leaseWrite('b', 10), leaseWrite('a', 11, 409), vmWrite('a', 12)], role);
    expect(history.secondWriters).toEqual([{ user: 'a', holder: 'b', at: t(12), what: 'patch virtualmachines/status ns/vm → 200' }]);
  });
});
