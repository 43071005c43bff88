// Placement drift (upstream §2.5): does the VM still run where the scheduler
// would put it now, and if not, what does its migrationPolicy allow? There is
// no live migration: moving means recreating.
//
// Where the VM runs is read from the infrastructure machine it controls
// (placement.ts: RunningPlacement), never from `status.scheduled`: that is a
// record anyone with access to the status subresource can write (issue 10,
// point 7), so a forged record moves nothing. Only a real change (the
// Provider or failure domain no longer fits, a class now resolves to another
// target than the machine carries) is drift.
import type { ResolvedClass, VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../infra/api/conditions.js';
import { Annotation } from '../../../infra/api/well-known.js';
import { describePlacement, sameResolved, type Placement, type RunningPlacement } from './placement.js';

/**
 * - InPlace: build and apply at the fresh placement (nothing drifted, or nothing runs).
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
  /** What drifted, when something did (also on StickToOld). */
  readonly reason?: DriftReason;
}

/** What to do about a VM running at `running` (undefined: nothing runs) when the scheduler now says `fresh` (undefined: nothing fits). */
export function evaluateDrift(vm: VirtualMachine, running: RunningPlacement | undefined, fresh: Placement | undefined): DriftDecision {
  if (!running) return { action: 'InPlace' };
  // Scheduling fails now but the VM runs somewhere: keep it running there.
  if (!fresh) return { action: 'StickToOld' };
  const reason = driftReason(running, fresh);
  if (!reason) return { action: 'InPlace' };
  switch (vm.spec.migrationPolicy ?? 'automatic') {
    case 'never':
      return { action: 'StickToOld', reason };
    case 'manual':
      return { action: isMigrationRequested(vm) ? 'Recreate' : 'SurfaceOnly', reason };
    case 'automatic':
      return { action: 'Recreate', reason };
  }
}

/** Whether a manual VM is annotated to move. */
function isMigrationRequested(vm: VirtualMachine): boolean {
  return vm.metadata.annotations?.[Annotation.migrate] === 'true';
}

/**
 * What changed, in words naming the old and the new placement, e.g. `the
 * failure domain no longer fits: vcenter/fd-a → vcenter/fd-b`.
 */
export function describeDrift(reason: DriftReason, running: RunningPlacement, fresh: Placement): string {
  const from = describePlacement(running);
  const to = describePlacement(fresh);
  switch (reason) {
    case Reason.ProviderChanged:
      return `the Provider no longer fits: ${from} → ${to}`;
    case Reason.FailureDomainChanged:
      return `the failure domain no longer fits: ${from} → ${to}`;
    case Reason.StorageMappingChanged:
      return `a storage class now resolves differently on ${to}: ${describeTargets(running.resolvedStorage ?? [], fresh.resolvedStorage)}`;
    case Reason.NetworkMappingChanged:
      return `a network class now resolves differently on ${to}: ${describeTargets(running.resolvedNetworks ?? [], fresh.resolvedNetworks)}`;
  }
}

/** The first difference, in upstream order: provider, failure domain, storage, networks (lists only where the machine carries them). */
function driftReason(running: RunningPlacement, fresh: Placement): DriftReason | undefined {
  if (running.providerClass !== fresh.providerClass || running.providerName !== fresh.providerName) return Reason.ProviderChanged;
  if (running.failureDomain !== fresh.failureDomain.name) return Reason.FailureDomainChanged;
  if (running.resolvedStorage && !sameResolved(running.resolvedStorage, fresh.resolvedStorage)) return Reason.StorageMappingChanged;
  if (running.resolvedNetworks && !sameResolved(running.resolvedNetworks, fresh.resolvedNetworks)) return Reason.NetworkMappingChanged;
  return undefined;
}

/** `class "fast": ds-1 → ds-2`, for each entry that differs. */
function describeTargets(running: readonly ResolvedClass[], fresh: readonly ResolvedClass[]): string {
  const changed = fresh.flatMap((f, i) => (running[i]?.backendId !== f.backendId ? [`class "${f.className}": ${running[i]?.backendId ?? '(none)'} → ${f.backendId}`] : []));
  return [...new Set(changed)].join(', ');
}
