// What counts as a machine failed during a backend outage (#15): a terminal
// reason, not the backend's reachability that the outage is meant to show.
import { describe, expect, it } from 'vitest';
import { Reason } from '../../../infra/api/conditions.js';
import { isFailureReason } from '../../faults/verdict.js';

describe('fault run verdict: failed machines', () => {
  it('counts a reason ending in Failed as a failure (ProvisionFailed, DeletionFailed)', () => {
    expect(isFailureReason(Reason.ProvisionFailed)).toBe(true);
    expect(isFailureReason(Reason.DeletionFailed)).toBe(true);
  });

  it('does not count ConnectFailed, the backend being unreachable, nor a reason that is no failure', () => {
    expect(isFailureReason(Reason.ConnectFailed)).toBe(false);
    expect(isFailureReason('WaitingForAddress')).toBe(false);
    expect(isFailureReason(undefined)).toBe(false);
  });

  it('does not count DeletionFailed on an object being deleted (its VM not deleted yet: judged at the end), but does on one that is not', () => {
    expect(isFailureReason(Reason.DeletionFailed, true)).toBe(false);
    expect(isFailureReason(Reason.ProvisionFailed, true)).toBe(true);
    expect(isFailureReason(Reason.DeletionFailed, false)).toBe(true);
  });
});
