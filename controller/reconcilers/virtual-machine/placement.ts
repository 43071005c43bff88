// The scheduler's answer, as `status.scheduled` records it.
import type { ResolvedClass, ScheduledPlacement } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Placement } from '../../scheduler/schedule.js';

export type { Placement } from '../../scheduler/schedule.js';
import { toTimestamp } from '../../runtime/conditions.js';

/** `status.scheduled` for a placement chosen at `now`. */
export function toScheduledPlacement(placement: Placement, now: Date): ScheduledPlacement {
  return {
    providerName: placement.providerName,
    providerClass: placement.providerClass,
    failureDomain: placement.failureDomain.name,
    resolvedStorage: placement.resolvedStorage.map(copyResolved),
    resolvedNetworks: placement.resolvedNetworks.map(copyResolved),
    scheduledAt: toTimestamp(now),
  };
}

const copyResolved = (r: ResolvedClass): ResolvedClass => ({ className: r.className, backendId: r.backendId });
