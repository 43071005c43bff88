// Whether a fault run passed: the end state a run of kills and outages must
// leave (no duplicate or orphan VM, every VM Ready, every deletion done), each
// miss named. Pure.
import { Reason } from '../../infra/api/conditions.js';
import type { FaultRun } from './fault-run.js';

/** At least this many kill -9 per run. */
export const MIN_KILLS = 10;

export function decideVerdict(run: Pick<FaultRun, 'counts' | 'fleet' | 'recreation' | 'leases' | 'peerProblems' | 'outageSign'>): {
  passed: boolean;
  problems: string[];
} {
  const { counts, fleet, leases } = run;
  const kills = Object.values(counts.kills).reduce((a, b) => a + b, 0);
  const secondWriters = leases.controller.secondWriters.length + leases.provider.secondWriters.length;
  const problems = [
    ...(kills < MIN_KILLS ? [`only ${kills} kills (at least ${MIN_KILLS})`] : []),
    ...(fleet.duplicates > 0 ? [`${fleet.duplicates} duplicate VMs`] : []),
    ...(fleet.orphans > 0 ? [`${fleet.orphans} orphan VMs`] : []),
    ...(run.recreation.recreated > 0 ? [`${run.recreation.recreated} VirtualMachines whose VM was re-created unasked`] : []),
    ...(fleet.stuckFinalizers > 0 ? [`${fleet.stuckFinalizers} objects stuck with a finalizer`] : []),
    ...(fleet.notReady.length > 0 ? [`${fleet.notReady.length} VirtualMachines not Ready`] : []),
    ...(fleet.notGone.length > 0 ? [`${fleet.notGone.length} deleted objects not gone`] : []),
    ...(fleet.found !== fleet.expected ? [`${fleet.found} of ${fleet.expected} expected VMs found in the backend`] : []),
    ...(secondWriters > 0 ? [`${secondWriters} writes by a replica that did not hold its Lease`] : []),
    ...(counts.apiserverOutages < 1 || counts.backendOutages < 1 ? ['an outage did not take place'] : []),
    ...(!counts.unreachableSeen ? [`${run.outageSign} not seen while the backend was unreachable`] : []),
    ...counts.failedDuringOutage.map((what) => `failed during the backend outage: ${what}`),
    ...(!counts.recovered ? ['the Provider (or its machines) did not become reachable again after the backend outage'] : []),
    ...run.peerProblems,
  ];
  return { passed: problems.length === 0, problems };
}

/**
 * A condition reason that fails a machine (ProvisionFailed, TaskFailed…). ConnectFailed is not one:
 * it is the backend's reachability, reported on a machine whose pass could not reach it and retried
 * with backoff (controller/reconcilers/backend-failure.ts); a backend outage is meant to show it,
 * and the machine must be Ready again once the backend answers (the fleet check sees to that).
 * Nor is DeletionFailed on an object being deleted: "the VM could not be deleted yet; the finalizer
 * stays" (docs/<backend>.md), what a deletion reads while its backend does not answer; whether it
 * ended is judged at the end (deleted not gone, stuck finalizers).
 */
export function isFailureReason(reason: string | undefined, deleting = false): boolean {
  if (deleting && reason === Reason.DeletionFailed) return false;
  return reason !== undefined && reason.endsWith('Failed') && reason !== Reason.ConnectFailed;
}
