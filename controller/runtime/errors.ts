// How a reconcile can end, besides success (STYLE §2 "Errors and conditions").
// A spec that cannot work is no error: the reconciler writes a condition and
// returns `blocked` (controller/reconcilers/backend-failure.ts maps backend errors).
import type { Reason } from '../../infra/api/conditions.js';

/** Network trouble, 5xx, 409, timeouts: retried with rate-limited backoff. */
export class TransientError extends Error {
  constructor(
    message: string,
    readonly reason?: Reason,
  ) {
    super(message);
    this.name = 'TransientError';
  }
}

/** What a reconcile returns: done, or come back later (not an error). */
export interface ReconcileResult {
  readonly requeueAfterMs?: number;
  /** The pass waits on work it started (a clone task): no success yet, so a backoff from before holds. */
  readonly inProgress?: boolean;
  /** Blocked until someone fixes something: come back on the key's backoff, from this delay (`blocked`). */
  readonly blockedRetryMs?: number;
}

export const done: ReconcileResult = {};

/** An unready dependency: come back after `afterMs`; not logged as an error. */
export function waiting(afterMs: number): ReconcileResult {
  return { requeueAfterMs: afterMs };
}

/**
 * Work the pass started and must look at again (a backend task) after
 * `afterMs`: unlike `waiting`, a backoff from earlier failures holds. Otherwise
 * a task that the backend fails every time (a refused clone) would be started
 * anew at the first delay, every few seconds.
 */
export function inProgress(afterMs: number): ReconcileResult {
  return { requeueAfterMs: afterMs, inProgress: true };
}

/**
 * A spec that cannot work as it is (the backend refuses it: a reference to
 * nothing, a name it does not take): its condition says why. Not an error,
 * not logged as one, but retried like one: after `firstMs`, then ever later up
 * to the queue's longest retry delay (minutes), and at once when the object
 * itself changes; never at a fixed short interval.
 */
export function blocked(firstMs: number): ReconcileResult {
  return { blockedRetryMs: firstMs };
}
