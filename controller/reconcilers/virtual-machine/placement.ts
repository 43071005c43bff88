// The scheduler's answer as this reconciler reads it. A local structural copy of
// controller/scheduler's `Placement` so the two can be written in parallel; the
// shapes are identical and the lead unifies them.
import type { Backend, FailureDomainStatus } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ResolvedClass, ScheduledPlacement } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { toTimestamp } from '../../runtime/conditions.js';

/** Where a VirtualMachine runs, with its classes resolved to backend targets. */
export interface Placement {
  readonly providerName: string;
  readonly providerNamespace: string;
  readonly providerClass: Backend;
  readonly failureDomain: FailureDomainStatus;
  /** One per class disk, in class order. */
  readonly resolvedStorage: readonly ResolvedClass[];
  /** One per class interface, in class order. */
  readonly resolvedNetworks: readonly ResolvedClass[];
}

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
