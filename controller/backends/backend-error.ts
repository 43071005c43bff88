// The error every backend client throws (STYLE §2 "Errors and conditions").
// controller/reconcilers/backend-failure.ts maps its `kind` (and the `reason`
// a refusal may carry) to a condition reason and to how the queue retries.
// Shared by every backend client.
import type { Reason } from '../../infra/api/conditions.js';

/** What went wrong, as the provider needs to know it. */
export const BackendErrorKind = {
  /** The object (VM, task, datastore…) does not exist (any more). */
  NotFound: 'NotFound',
  /** Credentials refused, session gone and re-login failed, or no permission. */
  Unauthorized: 'Unauthorized',
  /** Network, TLS, timeout, HTTP-level or transient server trouble: retry later. */
  Unreachable: 'Unreachable',
  /** The backend refused the request as asked (wrong state, duplicate, bad argument). */
  Rejected: 'Rejected',
  /** An asynchronous task ran and ended in error. */
  TaskFailed: 'TaskFailed',
  /** The VM found by UUID is not this machine's (its ownership mark differs or is missing): leave it alone. */
  NotOwned: 'NotOwned',
} as const;
export type BackendErrorKind = (typeof BackendErrorKind)[keyof typeof BackendErrorKind];

export interface BackendErrorOptions {
  /** The underlying error (socket error, parse error…). */
  readonly cause?: unknown;
  /**
   * A machine-readable detail beside `kind`, e.g. Node's TLS code
   * `DEPTH_ZERO_SELF_SIGNED_CERT` or `TaskDeadlineExceeded`.
   */
  readonly code?: string;
  /** The condition reason a refusal shows instead of the reconciler's own (e.g. TemplateNotFound rather than ProvisionFailed). */
  readonly reason?: Reason;
}

export class BackendError extends Error {
  readonly code: string | undefined;
  readonly reason: Reason | undefined;

  constructor(
    readonly kind: BackendErrorKind,
    message: string,
    options: BackendErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BackendError';
    this.code = options.code;
    this.reason = options.reason;
  }
}

/** True for a BackendError, of `kind` when given. */
export function isBackendError(error: unknown, kind?: BackendErrorKind): error is BackendError {
  return error instanceof BackendError && (kind === undefined || error.kind === kind);
}

/** The backend could not be reached or refused the credentials: a connection problem (ConnectFailed), not the request's. */
export function isConnectFailure(error: unknown): boolean {
  return isBackendError(error, BackendErrorKind.Unauthorized) || isBackendError(error, BackendErrorKind.Unreachable);
}
