// What an API call failure means, in words a user can act on. Never includes
// request bodies (they may carry credentials).

export type ApiFailureKind = 'Unreachable' | 'Unauthorized' | 'Forbidden' | 'NotFound' | 'Conflict' | 'Invalid' | 'Gone' | 'Other';

export interface ApiFailure {
  readonly kind: ApiFailureKind;
  readonly status?: number;
  readonly message: string;
}

interface MaybeApiException {
  code?: unknown;
  body?: unknown;
  message?: unknown;
  cause?: unknown;
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE', 'UND_ERR_SOCKET']);

function statusMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return statusMessage(JSON.parse(body));
    } catch {
      return body.length > 0 ? body.slice(0, 500) : undefined;
    }
  }
  if (body && typeof body === 'object' && 'message' in body && typeof body.message === 'string') return body.message;
  return undefined;
}

function kindOfStatus(status: number): ApiFailureKind {
  switch (status) {
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 422:
      return 'Invalid';
    default:
      return 'Other';
  }
}

/** Classify an error thrown by @kubernetes/client-node. */
export function toApiFailure(err: unknown): ApiFailure {
  const e = (err ?? {}) as MaybeApiException;
  if (typeof e.code === 'number') {
    return { kind: kindOfStatus(e.code), status: e.code, message: statusMessage(e.body) ?? `HTTP ${e.code}` };
  }
  const netCode = typeof e.code === 'string' ? e.code : ((e.cause as MaybeApiException | undefined)?.code as string | undefined);
  if (netCode && NETWORK_CODES.has(netCode)) return { kind: 'Unreachable', message: netCode };
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|socket hang up|certificate|self-signed|ECONNRESET/i.test(message)) {
    return { kind: 'Unreachable', message };
  }
  return { kind: 'Other', message };
}
