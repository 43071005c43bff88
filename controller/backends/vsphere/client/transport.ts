// HTTPS transport for vim25 SOAP: one keep-alive agent per endpoint, the
// session cookie, a deadline per call, and TLS verified against the Provider's
// CA bundle. Faults and network trouble leave here as BackendErrors.
import { request, type Agent } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { abortError, currentSignal } from '../../cancellation.js';
import { readBoundedBody } from '../../kit/wire/bounded-body.js';
import { parseHttpsEndpoint } from '../../kit/wire/https-endpoint.js';
import { tlsAgent } from '../../kit/wire/tls-agent.js';
import { decodeResponse, encodeRequest, type XmlFields } from './soap-envelope.js';
import { faultFromSoap, isVsphereFault } from './vsphere-fault.js';
import type { XmlElement } from './xml-element.js';

export interface SoapTransportOptions {
  /** The SDK URL, e.g. `https://vcenter.example.com/sdk`. Must be https. */
  readonly endpoint: string;
  /**
   * PEM bundle of the CAs to trust instead of Node's default roots. At least one
   * certificate. @default Node's default roots
   */
  readonly caPem?: string;
  /** Skip certificate and host name checks (wins over `caPem`). @default false */
  readonly insecureSkipTLSVerify?: boolean;
  /**
   * Sent as `SOAPAction: urn:vim25/<apiVersion>`; selects the wire version of
   * the API. 8.0.1.0 is understood by vCenter 8.0U1+ (and ignored by vcsim).
   * @default '8.0.1.0'
   */
  readonly apiVersion?: string;
  /** Deadline for one call, connect to last byte. @default 120000 (120 s) */
  readonly timeoutMs?: number;
  /** Told of every call once it ends (for metrics): the method, how it ended, how long it took. */
  readonly onCall?: (method: string, outcome: CallOutcome, seconds: number) => void;
  /** Sent as User-Agent (vCenter's session list shows it). @default none */
  readonly userAgent?: string;
}

/** ok; fault: the server answered with a SOAP fault; error: no usable answer (network, TLS, HTTP). */
export type CallOutcome = 'ok' | 'fault' | 'error';

/** One layer down from the session: a SOAP call and its cookie. */
export interface SoapCaller {
  /** POSTs `<method>fields</method>`; resolves to the `<methodResponse>` element. */
  call(method: string, fields: XmlFields): Promise<XmlElement>;
  /** Forgets the session cookie (before logging in again). */
  clearSession(): void;
  /** Closes pooled connections. */
  close(): void;
}

const SESSION_COOKIE = 'vmware_soap_session';
// A response this large is a broken server or proxy, not an inventory.
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export class HttpsSoapTransport implements SoapCaller {
  private readonly url: URL;
  private readonly agent: Agent;
  private readonly soapAction: string;
  private readonly timeoutMs: number;
  private readonly onCall: SoapTransportOptions['onCall'];
  private readonly userAgent: string | undefined;
  private cookie: string | undefined;

  constructor(options: SoapTransportOptions) {
    this.url = parseHttpsEndpoint(options.endpoint);
    this.agent = tlsAgent(options);
    this.soapAction = `urn:vim25/${options.apiVersion ?? '8.0.1.0'}`;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.onCall = options.onCall;
    this.userAgent = options.userAgent;
  }

  get endpoint(): string {
    return this.url.href;
  }

  async call(method: string, fields: XmlFields): Promise<XmlElement> {
    if (!this.onCall) return this.callOnce(method, fields);
    const started = process.hrtime.bigint();
    const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const body = await this.callOnce(method, fields);
      this.onCall(method, 'ok', seconds());
      return body;
    } catch (err) {
      this.onCall(method, isVsphereFault(err) ? 'fault' : 'error', seconds());
      throw err;
    }
  }

  private async callOnce(method: string, fields: XmlFields): Promise<XmlElement> {
    const { status, body } = await this.post(method, encodeRequest(method, fields));
    let decoded;
    try {
      decoded = decodeResponse(body);
    } catch (cause) {
      throw httpError(method, status, cause);
    }
    if (decoded.kind === 'fault') throw faultFromSoap(method, decoded.fault);
    if (status !== 200) throw httpError(method, status);
    return decoded.body;
  }

  clearSession(): void {
    this.cookie = undefined;
  }

  close(): void {
    this.agent.destroy();
  }

  private post(method: string, payload: string): Promise<{ status: number; body: string }> {
    const signal = currentSignal();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const headers: Record<string, string | number> = {
        'Content-Type': 'text/xml; charset=utf-8',
        'Content-Length': Buffer.byteLength(payload),
        SOAPAction: this.soapAction,
      };
      if (this.userAgent !== undefined) headers['User-Agent'] = this.userAgent;
      if (this.cookie !== undefined) headers.Cookie = `${SESSION_COOKIE}=${this.cookie}`;
      const req = request(this.url, { method: 'POST', agent: this.agent, headers }, (res) => {
        this.keepCookie(res);
        readBoundedBody(res, MAX_RESPONSE_BYTES).then((body) => resolve({ status: res.statusCode ?? 0, body }), fail);
      });
      const timer = setTimeout(() => {
        req.destroy(
          new BackendError(BackendErrorKind.Unreachable, `${method}: no response within ${this.timeoutMs} ms from ${this.url.host}`, { code: 'Timeout' }),
        );
      }, this.timeoutMs);
      timer.unref();
      function fail(error: unknown): void {
        clearTimeout(timer);
        reject(error);
      }
      req.on('error', (error) => fail(signal?.aborted ? abortError(signal) : error instanceof BackendError ? error : networkError(method, this.url, error)));
      // A stopping role cuts the request short; the server may still carry it out.
      const abort = (): void => void req.destroy(signal ? (abortError(signal) as Error) : undefined);
      signal?.addEventListener('abort', abort, { once: true });
      req.on('close', () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
      });
      req.end(payload);
    });
  }

  private keepCookie(res: IncomingMessage): void {
    for (const header of res.headers['set-cookie'] ?? []) {
      const [pair = ''] = header.split(';');
      const eq = pair.indexOf('=');
      // vCenter quotes the value ("52f1…"); it is sent back exactly as received.
      if (eq > 0 && pair.slice(0, eq).trim() === SESSION_COOKIE) this.cookie = pair.slice(eq + 1).trim();
    }
  }
}

function networkError(method: string, url: URL, error: Error): BackendError {
  const code = (error as NodeJS.ErrnoException).code;
  // TLS verification failures are Unreachable too: the endpoint cannot be used as
  // configured. `code` (e.g. DEPTH_ZERO_SELF_SIGNED_CERT) tells them apart.
  return new BackendError(BackendErrorKind.Unreachable, `${method}: ${url.host}: ${error.message}`, {
    cause: error,
    ...(code === undefined ? {} : { code }),
  });
}

function httpError(method: string, status: number, cause?: unknown): BackendError {
  const kind = status === 401 || status === 403 ? BackendErrorKind.Unauthorized : BackendErrorKind.Unreachable;
  const why = cause === undefined ? '' : `: ${(cause as Error).message}`;
  return new BackendError(kind, `${method}: HTTP ${status}, not a SOAP response${why}`, { cause, code: `HTTP${status}` });
}
