// Pause, decided purely (CAPI util/paused/paused.go): an object is paused by
// its own spec.paused or by CAPI's cluster.x-k8s.io/paused annotation, which
// counts when present whatever its value (util/annotations/helpers.go).
// Writing the condition is the status step's job, not this module's.
import { ConditionType, Reason } from '../../infra/api/conditions.js';
import { Annotation } from '../../infra/api/well-known.js';
import type { ConditionInput } from '../runtime/conditions.js';

/** The part of an object that says whether it is paused. */
export interface Pausable {
  readonly metadata: { readonly annotations?: Readonly<Record<string, string>>; readonly generation?: number };
  readonly spec?: { readonly paused?: boolean };
}

/**
 * Whether reconciliation of `obj` is paused.
 * @param pausedCluster the owning CAPI Cluster, when its spec.paused is true (see owning-cluster.ts).
 */
export function isPaused(obj: Pausable, pausedCluster?: string): boolean {
  return pausedBy(obj, pausedCluster).length > 0;
}

/** What pauses `obj`, as phrases for a condition message; empty when not paused. */
export function pausedBy(obj: Pausable, pausedCluster?: string): string[] {
  const by: string[] = [];
  if (obj.spec?.paused === true) by.push('spec.paused is true');
  if (obj.metadata.annotations?.[Annotation.capiPaused] !== undefined) {
    by.push(`annotation ${Annotation.capiPaused} is set`);
  }
  if (pausedCluster !== undefined) by.push(`Cluster ${pausedCluster} has spec.paused`);
  return by;
}

/**
 * The Paused condition. Pass the object itself to have the message say which
 * of spec.paused and the annotation is set; a bare boolean gives a generic message.
 * @param generation metadata.generation to record; defaults to the object's own when an object is passed.
 */
export function pausedCondition(paused: boolean | Pausable, generation?: number, pausedCluster?: string): ConditionInput {
  const by = typeof paused === 'boolean' ? undefined : pausedBy(paused, pausedCluster);
  const observedGeneration = generation ?? (typeof paused === 'boolean' ? undefined : paused.metadata.generation);
  const isSet = by === undefined ? paused === true : by.length > 0;
  const base = isSet
    ? {
        type: ConditionType.Paused,
        status: 'True' as const,
        reason: Reason.Paused,
        message:
          by === undefined
            ? `Reconciliation is paused: spec.paused or annotation ${Annotation.capiPaused} is set`
            : `Reconciliation is paused: ${by.join(' and ')}`,
      }
    : { type: ConditionType.Paused, status: 'False' as const, reason: Reason.NotPaused, message: '' };
  return observedGeneration === undefined ? base : { ...base, observedGeneration };
}
