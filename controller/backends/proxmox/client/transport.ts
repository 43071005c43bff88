// The PVE REST transport: `/api2/json` over HTTPS with an API token, TLS
// verified against the Provider's CA bundle (or skipped only when asked),
// parameters form-encoded, `{data: …}` unwrapped and checked against the
// call's return type, errors typed (proxmox-error.ts), and retries where a
// second attempt cannot do the work twice.
import type { Agent } from 'node:https';
import { setTimeout as delay } from 'node:timers/promises';
import type { Static, TObject, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { currentSignal } from '../../cancellation.js';
import { parseHttpsEndpoint } from '../../kit/wire/https-endpoint.js';
import { tlsAgent } from '../../kit/wire/tls-agent.js';
import { authorizationHeader, checkToken, type ProxmoxToken } from './credentials.js';
import type { Endpoint } from './endpoints.js';
import { encodeForm, formValues, type ParamValue } from './form-encoding.js';
import { exchange, ExchangeFailure, type ExchangeAnswer } from './https-exchange.js';
import { encodeMultipart } from './multipart.js';
import { ProxmoxError } from './proxmox-error.js';

export interface ProxmoxTransportOptions extends ProxmoxToken {
  /** The API server, `https://<host>:8006` (a trailing `/api2/json` is accepted). Must be https. */
  readonly endpoint: string;
  /**
   * PEM bundle of the CAs to trust instead of Node's default roots, e.g. the
   * cluster's `/etc/pve/pve-root-ca.pem`. @default Node's default roots
   */
  readonly caPem?: string;
  /** Skip certificate and host name checks (wins over `caPem`). @default false */
  readonly insecureSkipTLSVerify?: boolean;
  /** Deadline for one attempt, connect to last byte. @default 60000 (60 s) */
  readonly timeoutMs?: number;
  /**
   * Waits before the 2nd, 3rd… attempt of a call that may be retried; its
   * length is the number of retries. @default [250, 1000, 4000]
   */
  readonly retryDelaysMs?: readonly number[];
  /** Sent as User-Agent (PVE's access log shows it). @default none */
  readonly userAgent?: string;
  /** Told of every attempt (metrics): `METHOD /path/{template}`, how it ended, how long it took. */
  readonly onCall?: (call: string, outcome: CallOutcome, seconds: number) => void;
}

/** ok; fault: PVE answered with an error status; error: no usable answer (network, TLS, garbage). */
export type CallOutcome = 'ok' | 'fault' | 'error';

/** The file of an upload call. */
export interface UploadFile {
  readonly data: Buffer;
}

type Params = Readonly<Record<string, ParamValue>>;

interface Prepared {
  readonly call: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
}

export class ProxmoxTransport {
  private readonly base: URL;
  private readonly agent: Agent;
  private readonly authorization: string;
  private readonly timeoutMs: number;
  private readonly retryDelaysMs: readonly number[];
  private readonly onCall: ProxmoxTransportOptions['onCall'];
  private readonly userAgent: string | undefined;

  constructor(options: ProxmoxTransportOptions) {
    checkToken(options);
    this.base = apiServer(options.endpoint);
    this.agent = tlsAgent(options);
    this.authorization = authorizationHeader(options);
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [250, 1_000, 4_000];
    this.onCall = options.onCall;
    this.userAgent = options.userAgent;
  }

  /** `https://host:8006`, without the API path. */
  get endpoint(): string {
    return this.base.origin;
  }

  /** Makes the call; resolves to its `data`, converted to and checked as the endpoint's return type. */
  call<P extends TObject, R extends TSchema>(endpoint: Endpoint<P, R>, params: Static<P>): Promise<Static<R>> {
    const { path, rest } = fillPath(endpoint, params as Params);
    const form = encodeForm(rest);
    const inQuery = endpoint.method === 'GET' || endpoint.method === 'DELETE';
    const url = this.url(path, inQuery ? form : '');
    const headers: Record<string, string> = { Authorization: this.authorization, Accept: 'application/json' };
    if (inQuery) return this.send(endpoint, { call: label(endpoint), url, headers });
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    return this.send(endpoint, { call: label(endpoint), url, headers, body: Buffer.from(form) });
  }

  /** A multipart upload (`/nodes/{node}/storage/{storage}/upload`): the file goes in the part named `filename`. */
  upload<P extends TObject, R extends TSchema>(endpoint: Endpoint<P, R>, params: Static<P> & { filename: string }, file: UploadFile): Promise<Static<R>> {
    const { path, rest } = fillPath(endpoint, params as Params);
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) {
      const [first] = formValues(value);
      if (name !== 'filename' && first !== undefined) fields[name] = first;
    }
    const { contentType, body } = encodeMultipart(fields, { field: 'filename', fileName: params.filename, data: file.data });
    const headers = { Authorization: this.authorization, Accept: 'application/json', 'Content-Type': contentType };
    return this.send(endpoint, { call: label(endpoint), url: this.url(path, ''), headers, body });
  }

  /** Closes pooled connections. */
  close(): void {
    this.agent.destroy();
  }

  private url(path: string, query: string): URL {
    const url = new URL(`/api2/json${path}`, this.base);
    url.search = query;
    return url;
  }

  private async send<R extends TSchema>(endpoint: Endpoint<TObject, R>, prepared: Prepared): Promise<Static<R>> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.attempt(endpoint, prepared);
      } catch (error) {
        const wait = this.retryDelaysMs[attempt];
        if (wait === undefined || !isRetryable(error, endpoint.method)) throw error;
        const signal = currentSignal();
        await delay(wait, undefined, signal ? { signal } : {});
      }
    }
  }

  private async attempt<R extends TSchema>(endpoint: Endpoint<TObject, R>, prepared: Prepared): Promise<Static<R>> {
    const started = process.hrtime.bigint();
    let outcome: CallOutcome = 'error';
    try {
      const headers = this.userAgent === undefined ? prepared.headers : { ...prepared.headers, 'User-Agent': this.userAgent };
      const answer = await exchange({ agent: this.agent, method: endpoint.method, timeoutMs: this.timeoutMs, ...prepared, headers });
      if (answer.status < 200 || answer.status > 299) {
        outcome = 'fault';
        throw new ProxmoxError(prepared.call, errorBody(answer));
      }
      const data = decode(endpoint.returns, dataOf(answer, prepared.call), prepared.call);
      outcome = 'ok';
      return data;
    } finally {
      this.onCall?.(prepared.call, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }
}

/** `GET /nodes/{node}/status`: the call's name in messages and metrics. */
function label(endpoint: Endpoint): string {
  return `${endpoint.method} ${endpoint.path}`;
}

/** Puts the `{name}` parameters into the path; the others are returned for the form. */
function fillPath(endpoint: Endpoint, params: Params): { path: string; rest: Params } {
  const rest: Record<string, ParamValue> = { ...params };
  const path = endpoint.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '' || Array.isArray(value)) throw new TypeError(`${label(endpoint)}: path parameter ${name} is missing`);
    delete rest[name];
    return encodeURIComponent(String(value));
  });
  return { path, rest };
}

/**
 * Whether another attempt is safe and useful. Always when the request cannot
 * have reached PVE (connection refused, stale kept-alive socket) or pveproxy
 * says it could not hand it on (502, 503, 595: node daemon or peer node
 * unreachable). Other network trouble and other 5xx only for GET: a POST that
 * PVE may have run (a clone, a start) must not run twice.
 */
function isRetryable(error: unknown, method: Endpoint['method']): boolean {
  if (error instanceof ExchangeFailure) return error.delivery === 'unsent' || (method === 'GET' && RETRYABLE_NETWORK_CODES.has(error.code ?? ''));
  if (error instanceof ProxmoxError) {
    if (error.status === 502 || error.status === 503 || error.status === 595) return true;
    return method === 'GET' && error.kind === BackendErrorKind.Unreachable;
  }
  return false;
}

/** Network errors worth a second GET; TLS verification errors are not among them. */
const RETRYABLE_NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'Timeout']);

function parseBody(answer: ExchangeAnswer): unknown {
  if (answer.body.trim() === '') return undefined;
  try {
    return JSON.parse(answer.body) as unknown;
  } catch {
    return undefined;
  }
}

function dataOf(answer: ExchangeAnswer, call: string): unknown {
  const body = parseBody(answer);
  if (typeof body !== 'object' || body === null || !('data' in body)) {
    throw new BackendError(BackendErrorKind.Unreachable, `${call}: HTTP ${answer.status}, not a PVE API answer (no "data")`, { code: 'UnexpectedResponse' });
  }
  return body.data;
}

function errorBody(answer: ExchangeAnswer): { status: number; message: string; fieldErrors: Record<string, string> } {
  const body = parseBody(answer);
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const errors = typeof record.errors === 'object' && record.errors !== null ? (record.errors as Record<string, unknown>) : {};
  const fieldErrors = Object.fromEntries(Object.entries(errors).map(([name, why]) => [name, typeof why === 'string' ? why : JSON.stringify(why)]));
  const message = (typeof record.message === 'string' && record.message.trim() !== '' ? record.message : answer.reason).trim();
  return { status: answer.status, message, fieldErrors };
}

/** PVE's JSON is looser than its schema (booleans as 1/0, integers as strings): convert, then check. */
function decode<R extends TSchema>(schema: R, data: unknown, call: string): Static<R> {
  const converted: unknown = Value.Convert(schema, data);
  if (Value.Check(schema, converted)) return converted;
  const first = Value.Errors(schema, converted).First();
  const where = first ? `${first.path || '/'}: ${first.message}` : 'does not match';
  throw new BackendError(BackendErrorKind.Unreachable, `${call}: unexpected answer, ${where}`, { code: 'UnexpectedResponse' });
}

/** The API server of `endpoint` (its origin): an https URL naming no path but the API's own. */
function apiServer(endpoint: string): URL {
  const url = parseHttpsEndpoint(endpoint);
  if (!/^\/?(api2\/json\/?)?$/.test(url.pathname)) throw new TypeError(`endpoint "${endpoint}" must be the server (https://host:8006), not a path in it`);
  return new URL(url.origin);
}
