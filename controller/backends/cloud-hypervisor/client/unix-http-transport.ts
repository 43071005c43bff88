// HTTP/1.1 over the VMM's unix socket. One connection per call, as upstream's client
// does: calls are rare, and a VMM that restarts leaves no pooled connection behind.
// A deadline per call; the pass's AbortSignal (cancellation.ts) cuts a call short.
// Socket trouble leaves here as a BackendError; HTTP answers, whatever their status,
// are returned to the caller, which reads them.
import { request } from 'node:http';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { abortError, currentSignal } from '../../cancellation.js';
import { readBoundedBody } from '../../kit/wire/bounded-body.js';

export interface UnixHttpTransportOptions {
  /** The VMM's `--api-socket path=…`. */
  readonly socketPath: string;
  /** Deadline for one call, connect to last byte. @default 30000 (30 s) */
  readonly timeoutMs?: number;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: string;
}

// The VMM's answers are a VmConfig at most; anything this large is not the VMM.
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export class UnixHttpTransport {
  readonly socketPath: string;
  private readonly timeoutMs: number;

  constructor(options: UnixHttpTransportOptions) {
    if (options.socketPath === '') throw new TypeError('socketPath must not be empty');
    this.socketPath = options.socketPath;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Sends `method path` with an optional JSON body; `label` names the call in errors. */
  send(label: string, method: string, path: string, json?: unknown): Promise<HttpAnswer> {
    const signal = currentSignal();
    const payload = json === undefined ? '' : JSON.stringify(json);
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      // Content-Length always, 0 included: micro_http does not read chunked bodies.
      const headers: Record<string, string | number> = { Accept: 'application/json', 'Content-Length': Buffer.byteLength(payload) };
      if (json !== undefined) headers['Content-Type'] = 'application/json';
      const req = request({ socketPath: this.socketPath, path, method, headers, agent: false }, (res) => {
        readBoundedBody(res, MAX_RESPONSE_BYTES).then(
          (body) => settle(() => resolve({ status: res.statusCode ?? 0, body })),
          (error: Error) => settle(() => reject(this.socketError(label, error, signal))),
        );
      });
      const timer = setTimeout(() => {
        req.destroy(
          new BackendError(BackendErrorKind.Unreachable, `${label}: no answer within ${this.timeoutMs} ms on ${this.socketPath}`, { code: 'Timeout' }),
        );
      }, this.timeoutMs);
      timer.unref();
      const abort = (): void => void req.destroy(signal ? (abortError(signal) as Error) : undefined);
      signal?.addEventListener('abort', abort, { once: true });
      let settled = false;
      function settle(done: () => void): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        done();
      }
      req.on('error', (error) => settle(() => reject(this.socketError(label, error, signal))));
      req.end(payload);
    });
  }

  private socketError(label: string, error: Error, signal: AbortSignal | undefined): unknown {
    if (signal?.aborted) return abortError(signal);
    if (error instanceof BackendError) return error;
    const code = (error as NodeJS.ErrnoException).code;
    // A socket we may not open is a permission problem, not a VMM that is away.
    const kind = code === 'EACCES' || code === 'EPERM' ? BackendErrorKind.Unauthorized : BackendErrorKind.Unreachable;
    return new BackendError(kind, `${label}: ${this.socketPath}: ${error.message}`, { cause: error, ...(code === undefined ? {} : { code }) });
  }
}
