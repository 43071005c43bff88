// The one conditions helper (CAPI util/conditions): pure functions over
// metav1.Condition lists. lastTransitionTime moves only when status changes,
// so an unchanged condition never causes a write. Messages are bounded here,
// the one place every condition goes through (CONDITION_MESSAGE_MAX_BYTES).
import type { Condition } from '../../infra/api/meta.js';
import type { ConditionType, Reason } from '../../infra/api/conditions.js';
import { bounded, CONDITION_MESSAGE_MAX_BYTES } from './bounded-text.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/**
 * A reason read back from a condition already on an object (the VM's own, or
 * its infra machine's Ready that a provider wrote), carried on as it is. The
 * only way a reason that is not a `Reason` constant reaches a condition.
 */
export type CopiedReason = string & { readonly __copied: true };

export function copiedReason(condition: Pick<Condition, 'reason'>): CopiedReason {
  return condition.reason as CopiedReason;
}

export interface ConditionInput {
  type: ConditionType;
  status: ConditionStatus;
  reason: Reason | CopiedReason;
  message?: string;
  observedGeneration?: number;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** `conditions` with `input` set; other types untouched, order kept, new types appended. */
export function setCondition(conditions: readonly Condition[] | undefined, input: ConditionInput, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const existing = list.findIndex((c) => c.type === input.type);
  const previous = existing >= 0 ? list[existing] : undefined;
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: bounded(input.message ?? '', CONDITION_MESSAGE_MAX_BYTES),
    lastTransitionTime: previous && previous.status === input.status ? previous.lastTransitionTime : toTimestamp(now),
    ...(input.observedGeneration !== undefined ? { observedGeneration: input.observedGeneration } : {}),
  };
  if (existing >= 0) list[existing] = next;
  else list.push(next);
  return list;
}

/** Set several conditions at once. */
export function setConditions(conditions: readonly Condition[] | undefined, inputs: readonly ConditionInput[], now: Date): Condition[] {
  return inputs.reduce<Condition[]>((acc, input) => setCondition(acc, input, now), [...(conditions ?? [])]);
}

/** metav1.Time has second precision; keep it so round trips compare equal. */
export function toTimestamp(now: Date): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}
