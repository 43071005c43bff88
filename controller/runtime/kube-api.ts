// A small raw-JSON client for the Kubernetes API, on the kubeconfig's TLS and
// credentials. Objects go over the wire exactly as given and come back exactly
// as the server sent them: client-node's typed serializer renames or drops
// fields it models differently (`enum`, `default`, `x-kubernetes-*` vanish from
// a CustomResourceDefinition), which must never happen to what we apply.
import { createHash } from 'node:crypto';
import { Agent, request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** An HTTP error answer of the API server; `body` is the Status JSON text. */
export class ApiStatusError extends Error {
  /** The API server's own words (its Status message). */
  readonly serverMessage: string;

  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    const serverMessage = statusMessage(body);
    super(`${what}: HTTP ${code}: ${serverMessage}`);
    this.name = 'ApiStatusError';
    this.serverMessage = serverMessage;
  }
}

function statusMessage(body: string): string {
  try {
    return String((JSON.parse(body) as { message?: string }).message ?? body);
  } catch {
    return body.slice(0, 500);
  }
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export interface RequestOptionsExtra {
  readonly query?: Record<string, string | undefined>;
  readonly body?: unknown;
  readonly contentType?: string;
}

/** One event of a watch stream. */
export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface KubeApiOptions {
  /** Sent as User-Agent, e.g. banlieue/0.1.0 (controller); audit logs tell writers apart by it. */
  readonly userAgent?: string;
  /** Called for every mutating request (metrics: writes at idle must be zero). */
  readonly onWrite?: (verb: string) => void;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class KubeApi {
  private readonly resources = new Map<string, Promise<ApiResource[]>>();
  /** The keep-alive agent of the current TLS identity (see agentFor). */
  private agent: { readonly key: string; readonly agent: Agent } | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly options: KubeApiOptions = {},
  ) {}

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  private async requestOptions(
    method: string,
    path: string,
    query: RequestOptionsExtra['query'],
    timeoutMs: number,
  ): Promise<{ url: URL; options: RequestOptions }> {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const options: RequestOptions = {
      method,
      headers: { accept: 'application/json', ...(this.options.userAgent ? { 'user-agent': this.options.userAgent } : {}) },
      timeout: timeoutMs,
    };
    await this.kc.applyToHTTPSOptions(options);
    options.agent = this.agentFor(options);
    return { url, options };
  }

  /**
   * client-node gives every request a new Agent, so every request paid a TLS
   * handshake (most of a busy role's CPU, and the API server's). One
   * keep-alive agent per TLS identity instead: a rotated client certificate
   * or CA (re-read from the kubeconfig on each request) gets a new one.
   */
  private agentFor(options: RequestOptions): Agent {
    const hash = createHash('sha256');
    for (const part of [options.ca, options.cert, options.key, options.pfx, options.passphrase, options.rejectUnauthorized, options.servername]) {
      // Each part on its own (no JSON of key bytes): this runs for every request.
      hash.update(Buffer.isBuffer(part) || typeof part === 'string' ? part : JSON.stringify(part ?? null)).update('\0');
    }
    const key = hash.digest('hex');
    if (this.agent?.key === key) return this.agent.agent;
    // The old agent's requests and watches finish on their own sockets (a watch ends within ten minutes).
    const old = this.agent?.agent;
    if (old) setTimeout(() => old.destroy(), 600_000).unref();
    const { ca, cert, key: privateKey, pfx, passphrase, rejectUnauthorized, servername } = options;
    const agent = new Agent({
      keepAlive: true,
      ca,
      cert,
      key: privateKey,
      pfx,
      passphrase,
      ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}),
      ...(servername ? { servername } : {}),
    });
    this.agent = { key, agent };
    return agent;
  }

  async request<T>(method: string, path: string, opts: RequestOptionsExtra = {}): Promise<T> {
    const { url, options } = await this.requestOptions(method, path, opts.query, 30_000);
    if (WRITE_METHODS.has(method)) this.options.onWrite?.(method);
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      // Said explicitly: Node sends a DELETE body with neither Content-Length nor chunked encoding, so the
      // server read none of it (a uid precondition was dropped) and took it for the next request on the
      // kept-alive socket ("400 Bad Request").
      options.headers = { ...options.headers, 'content-type': opts.contentType ?? 'application/json', 'content-length': Buffer.byteLength(payload) };
    }
    return new Promise<T>((resolve, reject) => {
      const req = request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve((text ? JSON.parse(text) : undefined) as T);
          else reject(new ApiStatusError(status, text, `${method} ${url.pathname}`));
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error(`${method} ${url.pathname} timed out`), { code: 'ETIMEDOUT' })));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /**
   * Stream a watch; resolves when the server ends it (timeoutSeconds), rejects
   * on any error, including an HTTP error answer (410 Gone among them).
   */
  async watch<T>(path: string, query: Record<string, string | undefined>, onEvent: (event: WatchEvent<T>) => void, signal: AbortSignal): Promise<void> {
    const timeoutSeconds = Number(query.timeoutSeconds ?? 300);
    // The socket may stay silent between bookmarks; give up only well after the server would have closed it.
    const { url, options } = await this.requestOptions('GET', path, { ...query, watch: '1' }, (timeoutSeconds + 60) * 1000);
    options.signal = signal;
    return new Promise<void>((resolve, reject) => {
      const req = request(url, options, (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => reject(new ApiStatusError(status, Buffer.concat(chunks).toString('utf8'), `WATCH ${url.pathname}`)));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf('\n');
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line) {
              try {
                onEvent(JSON.parse(line) as WatchEvent<T>);
              } catch (err) {
                req.destroy(err instanceof Error ? err : new Error(String(err)));
                return;
              }
            }
            newline = buffered.indexOf('\n');
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error(`WATCH ${url.pathname} went silent`), { code: 'ETIMEDOUT' })));
      req.on('error', (err) => (signal.aborted ? resolve() : reject(err)));
      req.end();
    });
  }

  /** The discovery path of an apiVersion: /api/v1 or /apis/<group>/<version>. */
  private static groupVersionPath(apiVersion: string): string {
    return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  }

  private async resourceOf(apiVersion: string, kind: string): Promise<ApiResource> {
    const find = async (refresh: boolean): Promise<ApiResource | undefined> => {
      if (refresh || !this.resources.has(apiVersion)) {
        const listing = this.request<{ resources: ApiResource[] }>('GET', KubeApi.groupVersionPath(apiVersion)).then((l) => l.resources);
        // A failed discovery is not cached: the next call asks again.
        listing.catch(() => this.resources.delete(apiVersion));
        this.resources.set(apiVersion, listing);
      }
      const listed = await this.resources.get(apiVersion);
      return listed?.find((r) => r.kind === kind && !r.name.includes('/'));
    };
    // A CRD established after the first lookup needs a fresh listing.
    const found = (await find(false)) ?? (await find(true));
    if (!found) throw new ApiStatusError(404, JSON.stringify({ message: `no resource for ${kind} in ${apiVersion}` }), 'discovery');
    return found;
  }

  /**
   * REST path of an object, or of its collection when name is empty (all
   * namespaces when a namespaced collection has no namespace).
   */
  async pathOf(ref: ObjectRef, subresource?: string): Promise<string> {
    const resource = await this.resourceOf(ref.apiVersion, ref.kind);
    const ns = resource.namespaced && ref.metadata.namespace ? `/namespaces/${ref.metadata.namespace}` : '';
    const name = ref.metadata.name ? `/${ref.metadata.name}` : '';
    return `${KubeApi.groupVersionPath(ref.apiVersion)}${ns}/${resource.name}${name}${subresource ? `/${subresource}` : ''}`;
  }

  async get<T>(ref: ObjectRef): Promise<T> {
    return this.request<T>('GET', await this.pathOf(ref));
  }
}
