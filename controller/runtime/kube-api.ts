// A small raw-JSON client for the Kubernetes API, on the kubeconfig's TLS and
// credentials. Objects go over the wire exactly as given and come back exactly
// as the server sent them: client-node's typed serializer renames or drops
// fields it models differently (`enum`, `default`, `x-kubernetes-*` vanish from
// a CustomResourceDefinition), which must never happen to what we apply.
import { request, type RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** An HTTP error answer of the API server; `body` is the Status JSON text. */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${code}: ${statusMessage(body)}`);
    this.name = 'ApiStatusError';
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
  metadata: { name: string; namespace?: string };
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

export class KubeApi {
  private readonly resources = new Map<string, Promise<ApiResource[]>>();

  constructor(private readonly kc: KubeConfig) {}

  get server(): string {
    return this.kc.getCurrentCluster()?.server ?? '';
  }

  async request<T>(method: string, path: string, opts: RequestOptionsExtra = {}): Promise<T> {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const options: RequestOptions = { method, headers: { accept: 'application/json' }, timeout: 30_000 };
    await this.kc.applyToHTTPSOptions(options);
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    if (payload !== undefined) {
      options.headers = { ...options.headers, 'content-type': opts.contentType ?? 'application/json' };
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

  /** REST path of an object (or of its collection when name is empty). */
  async pathOf(ref: ObjectRef, subresource?: string): Promise<string> {
    const resource = await this.resourceOf(ref.apiVersion, ref.kind);
    const ns = resource.namespaced ? `/namespaces/${ref.metadata.namespace ?? 'default'}` : '';
    const name = ref.metadata.name ? `/${ref.metadata.name}` : '';
    return `${KubeApi.groupVersionPath(ref.apiVersion)}${ns}/${resource.name}${name}${subresource ? `/${subresource}` : ''}`;
  }

  async get<T>(ref: ObjectRef): Promise<T> {
    return this.request<T>('GET', await this.pathOf(ref));
  }
}
