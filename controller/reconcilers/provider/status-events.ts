// What a Provider pass tells its users besides the status (pure): the Events its
// status write calls for, read from the conditions before and after it, and the
// machines a Provider being deleted waits for.
import type { Condition } from '../../../infra/api/meta.js';
import { ConditionType } from '../../../infra/api/conditions.js';
import { findCondition } from '../../runtime/conditions.js';

/** How many of the machines a Provider in use waits for are named; the rest are counted. */
const SHOWN_MACHINES = 10;

/** An Event to record on the Provider. */
export interface ProviderEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** The machines (`ns/name`) a Provider being deleted waits for, as its Warning names them. */
export function describeMachinesInUse(inUse: readonly string[]): string {
  const more = inUse.length > SHOWN_MACHINES ? `, and ${inUse.length - SHOWN_MACHINES} more` : '';
  return inUse.slice(0, SHOWN_MACHINES).join(', ') + more;
}

/** ProviderReachable changed status or reason: Normal when it is True now, else Warning; undefined when it did not change. */
export function reachabilityEvent(before: readonly Condition[] | undefined, after: readonly Condition[] | undefined): ProviderEvent | undefined {
  const was = findCondition(before, ConditionType.ProviderReachable);
  const is = findCondition(after, ConditionType.ProviderReachable);
  if (!is || (is.status === was?.status && is.reason === was?.reason)) return undefined;
  return { type: is.status === 'True' ? 'Normal' : 'Warning', reason: is.reason, message: is.message || 'Connected' };
}

/**
 * EndpointExclusive says False now, and did not before or said it of another Provider: a Warning
 * with its reason and message; undefined otherwise (a share already reported is not repeated).
 */
export function endpointSharedEvent(before: readonly Condition[] | undefined, after: readonly Condition[] | undefined): ProviderEvent | undefined {
  const was = findCondition(before, ConditionType.EndpointExclusive);
  const is = findCondition(after, ConditionType.EndpointExclusive);
  if (is?.status !== 'False') return undefined;
  if (was?.status === 'False' && was.message === is.message) return undefined;
  return { type: 'Warning', reason: is.reason, message: is.message };
}
