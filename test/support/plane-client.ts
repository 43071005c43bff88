// A test's own writes to a control plane of its own, through the raw API
// client (no kubectl process per write): apply as a user, status as a
// provider role writes it, merge patches, deletes, reads.
import { randomBytes } from 'node:crypto';
import { ApiStatusError, KubeApi } from '../../controller/runtime/kube-api.js';
import { loadKubeConfig } from '../../controller/runtime/kube-config.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import type { Obj } from './fixtures.js';

type Ref = Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>;

export class PlaneClient {
  readonly api: KubeApi;
  private readonly user: ServerSideApply;
  private readonly provider: ServerSideApply;

  constructor(kubeconfigPath: string) {
    this.api = new KubeApi(loadKubeConfig(kubeconfigPath));
    this.user = new ServerSideApply(this.api, 'banlieue-test');
    this.provider = new ServerSideApply(this.api, 'banlieue-test-provider');
  }

  /** A fresh namespace named `<prefix>-<random>`. */
  async namespace(prefix: string): Promise<string> {
    const name = `${prefix}-${randomBytes(3).toString('hex')}`;
    await this.api.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
    return name;
  }

  apply(obj: Obj): Promise<Obj> {
    return this.user.apply(obj);
  }

  /** Status as a provider role writes it (a field manager of its own). */
  applyStatus(obj: Ref, status: Record<string, unknown>): Promise<Obj> {
    const { name, namespace } = obj.metadata;
    return this.provider.apply(
      { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, ...(namespace ? { namespace } : {}) }, status },
      { subresource: 'status' },
    );
  }

  async patch(obj: Ref, patch: unknown): Promise<Obj> {
    return this.api.request<Obj>('PATCH', await this.api.pathOf(obj), { body: patch, contentType: 'application/merge-patch+json' });
  }

  async delete(obj: Ref): Promise<void> {
    await this.api.request('DELETE', await this.api.pathOf(obj)).catch((err: unknown) => {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    });
  }

  async get(obj: Ref): Promise<Obj | undefined> {
    return this.api.get<Obj>(obj).catch((err: unknown) => {
      if (err instanceof ApiStatusError && err.code === 404) return undefined;
      throw err;
    });
  }
}
