// What counts as a machine failed during a backend outage: a terminal reason,
// not the backend's reachability that the outage is meant to show.
import { describe, expect, it } from 'vitest';
import { Reason } from '../../../infra/api/conditions.js';
import { decideVerdict, isFailureReason } from '../../faults/verdict.js';

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

describe('fault run verdict: re-created VMs', () => {
  const history = { failovers: 1, secondWriters: [], writesChecked: 100 };
  const run = (recreated: number): Parameters<typeof decideVerdict>[0] => ({
    counts: {
      kills: { 'controller leader': 4, 'controller standby': 2, 'provider leader': 4, 'provider standby': 2 },
      otherExits: 0,
      apiserverOutages: 1,
      backendOutages: 1,
      unreachableSeen: true,
      failedDuringOutage: [],
      recovered: true,
    },
    fleet: { expected: 20, found: 20, duplicates: 0, orphans: 0, stuckFinalizers: 0, notReady: [], notGone: [], details: [] },
    recreation: { recreated, watched: 20, watchedById: 20, details: [] },
    leases: { controller: history, provider: history },
    peerProblems: [],
    outageSign: 'Provider ProviderReachable=False',
  });

  it('passes a run that ended as asked with no VM re-created', () => {
    expect(decideVerdict(run(0))).toEqual({ passed: true, problems: [] });
  });

  it('fails a run that re-created a VM nobody asked to, and names how many', () => {
    expect(decideVerdict(run(2))).toEqual({ passed: false, problems: ['2 VirtualMachines whose VM was re-created unasked'] });
  });
});
