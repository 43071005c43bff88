// How a reconcile can end, besides success (STYLE §2 "Errors and conditions").
// A spec that cannot work is no error: the reconciler writes a condition and
// returns `waiting` (controller/reconcilers/backend-failure.ts maps backend errors).
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
}

export const done: ReconcileResult = {};

/** An unready dependency: come back after `afterMs`; not logged as an error. */
export function waiting(afterMs: number): ReconcileResult {
  return { requeueAfterMs: afterMs };
}
