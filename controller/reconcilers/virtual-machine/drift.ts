// Placement drift (upstream §2.5): does the VM's recorded placement still match
// what the scheduler would choose now, and if not, what does its
// migrationPolicy allow? There is no live migration: moving means recreating.
import type { ResolvedClass, VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import { Annotation } from '../../../infra/api/well-known.js';
import type { Placement } from './placement.js';

/**
 * - InPlace: build and apply at the fresh placement (nothing drifted, or never placed).
 * - StickToOld: keep the infra object where it is; PlacementValid is not set False.
 * - SurfaceOnly: keep it, but set PlacementValid=False with `reason` (manual policy).
 * - Recreate: delete the infra object; the next pass builds it at the fresh placement.
 */
export type DriftAction = 'InPlace' | 'StickToOld' | 'SurfaceOnly' | 'Recreate';

export type DriftReason =
  | typeof Reason.ProviderChanged
  | typeof Reason.FailureDomainChanged
  | typeof Reason.StorageMappingChanged
  | typeof Reason.NetworkMappingChanged;

export interface DriftDecision {
  readonly action: DriftAction;
  /** What drifted, when something did (also on StickToOld, for Events). */
  readonly reason?: DriftReason;
}

export function evaluateDrift(vm: VirtualMachine, fresh: Placement | undefined): DriftDecision {
  const current = vm.status?.scheduled;
  if (!current) return { action: 'InPlace' };
  // Scheduling fails now but the VM runs somewhere: keep it running there.
  if (!fresh) return { action: 'StickToOld' };
  const reason = driftReason(current, fresh);
  if (!reason) return { action: 'InPlace' };
  switch (vm.spec.migrationPolicy ?? 'automatic') {
    case 'never':
      return { action: 'StickToOld', reason };
    case 'manual':
      return { action: vm.metadata.annotations?.[Annotation.migrate] === 'true' ? 'Recreate' : 'SurfaceOnly', reason };
    case 'automatic':
      return { action: 'Recreate', reason };
  }
}

type Recorded = NonNullable<NonNullable<VirtualMachine['status']>['scheduled']>;

/** The first difference, in upstream order: provider, failure domain, storage, networks. */
function driftReason(current: Recorded, fresh: Placement): DriftReason | undefined {
  if (current.providerName !== fresh.providerName) return Reason.ProviderChanged;
  if (current.failureDomain !== fresh.failureDomain.name) return Reason.FailureDomainChanged;
  if (!sameMapping(current.resolvedStorage ?? [], fresh.resolvedStorage)) return Reason.StorageMappingChanged;
  if (!sameMapping(current.resolvedNetworks ?? [], fresh.resolvedNetworks)) return Reason.NetworkMappingChanged;
  return undefined;
}

function sameMapping(a: readonly ResolvedClass[], b: readonly ResolvedClass[]): boolean {
  return a.length === b.length && a.every((x, i) => x.className === b[i]?.className && x.backendId === b[i]?.backendId);
}
