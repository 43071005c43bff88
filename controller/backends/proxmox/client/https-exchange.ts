// One HTTPS request and its whole answer, with a deadline and the pass's
// AbortSignal. No PVE knowledge here: transport.ts reads the answer.
import type { Agent } from 'node:https';
import { request } from 'node:https';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { abortError, currentSignal } from '../../cancellation.js';
import { readBoundedBody } from '../../kit/wire/bounded-body.js';

export interface ExchangeRequest {
  readonly agent: Agent;
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string | number>>;
  readonly body?: Buffer;
  readonly timeoutMs: number;
  /** For messages: `GET /nodes/{node}/status`. */
  readonly call: string;
}

export interface ExchangeAnswer {
  readonly status: number;
  /** PVE puts its error message here. */
  readonly reason: string;
  readonly body: string;
}

/**
 * Why a request got no answer, and whether the server can have seen it:
 * `unsent` (connection refused, or a kept-alive socket the server had closed:
 * Node's documented case for `req.reusedSocket`), `unknown` otherwise.
 */
export class ExchangeFailure extends BackendError {
  constructor(
    message: string,
    readonly delivery: 'unsent' | 'unknown',
    options: { cause?: unknown; code?: string },
  ) {
    super(BackendErrorKind.Unreachable, message, options);
    this.name = 'ExchangeFailure';
  }
}

// A response this large is a broken server or proxy, not a PVE answer.
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export function exchange(req: ExchangeRequest): Promise<ExchangeAnswer> {
  const signal = currentSignal();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const headers = { ...req.headers, ...(req.body ? { 'Content-Length': req.body.length } : {}) };
    const outgoing = request(req.url, { method: req.method, agent: req.agent, headers }, (res) => {
      readBoundedBody(res, MAX_RESPONSE_BYTES).then((body) => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '', body });
      }, fail);
    });
    const timer = setTimeout(() => {
      outgoing.destroy(new ExchangeFailure(`${req.call}: no answer within ${req.timeoutMs} ms from ${req.url.host}`, 'unknown', { code: 'Timeout' }));
    }, req.timeoutMs);
    timer.unref();
    function fail(error: Error): void {
      clearTimeout(timer);
      if (signal?.aborted) reject(abortError(signal));
      else if (error instanceof ExchangeFailure) reject(error);
      else reject(networkFailure(req, error, outgoing.reusedSocket));
    }
    outgoing.on('error', fail);
    // A stopping role cuts the request short; the server may still carry it out.
    const abort = (): void => void outgoing.destroy(signal ? (abortError(signal) as Error) : undefined);
    signal?.addEventListener('abort', abort, { once: true });
    outgoing.on('close', () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    });
    outgoing.end(req.body);
  });
}

function networkFailure(req: ExchangeRequest, error: Error, reusedSocket: boolean): ExchangeFailure {
  const code = (error as NodeJS.ErrnoException).code;
  const unsent = code === 'ECONNREFUSED' || (reusedSocket && code === 'ECONNRESET');
  // TLS verification failures land here too: the endpoint cannot be used as
  // configured; `code` (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE) tells them apart.
  return new ExchangeFailure(`${req.call}: ${req.url.host}: ${error.message}`, unsent ? 'unsent' : 'unknown', {
    cause: error,
    ...(code === undefined ? {} : { code }),
  });
}
