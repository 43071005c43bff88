// The one mapping from a backend error to what the user sees and what the
// queue does, shared by the machine, Provider and image-row reconcilers
// (STYLE §2 "Errors and conditions"): a connection problem is ConnectFailed
// and retried with backoff; a request the backend refused, or a task that
// failed, is blocked: retried ever later up to minutes, and at once when the
// object changes (runtime/errors.ts `blocked`), never hot.
import { Reason } from '../../infra/api/conditions.js';
import { BackendErrorKind, isBackendError, isConnectFailure } from '../backends/backend-error.js';

export interface BackendFailure {
  /** ConnectFailed for the backend's reachability, else the reconciler's own reason (ProvisionFailed, InventoryFailed…). */
  readonly reason: Reason;
  /** The error's message: backend clients never put credentials in it. */
  readonly message: string;
  /** `backoff`: the queue retries with backoff (transient); `wait`: blocked until someone fixes the spec or the backend (terminal). */
  readonly retry: 'backoff' | 'wait';
  /** An asynchronous task ended in error: whatever it was remembered by is over. */
  readonly taskFailed: boolean;
}

export function describeBackendFailure(err: unknown, otherwise: Reason): BackendFailure {
  const message = err instanceof Error ? err.message : String(err);
  const taskFailed = isBackendError(err, BackendErrorKind.TaskFailed);
  const notOwned = isBackendError(err, BackendErrorKind.NotOwned);
  const refused = taskFailed || notOwned || isBackendError(err, BackendErrorKind.Rejected) || isBackendError(err, BackendErrorKind.NotFound);
  // A refusal may name its own reason (TemplateNotFound); a connection problem or a foreign VM never does.
  const refusalReason = refused && isBackendError(err) ? err.reason : undefined;
  const reason = isConnectFailure(err) ? Reason.ConnectFailed : notOwned ? Reason.VMNotOwned : (refusalReason ?? otherwise);
  return { reason, message, retry: refused ? 'wait' : 'backoff', taskFailed };
}
