// The one server-side-apply helper. Every writer applies with its own field
// manager (DESIGN §3), so ownership of each field is visible in managedFields.
import { KubernetesObjectApi, PatchStrategy, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';

export class ServerSideApply {
  private readonly api: KubernetesObjectApi;

  constructor(
    kc: KubeConfig,
    private readonly fieldManager: string,
  ) {
    this.api = KubernetesObjectApi.makeApiClient(kc);
  }

  /** Apply `desired` as this field manager; force takes over fields another manager set. */
  async apply<T extends KubernetesObject>(desired: T, opts: { force?: boolean; dryRun?: boolean } = {}): Promise<T> {
    return this.api.patch<T>(
      desired,
      undefined,
      opts.dryRun ? 'All' : undefined,
      this.fieldManager,
      opts.force ?? true,
      PatchStrategy.ServerSideApply,
    );
  }

  /** Read the live object `ref` names (apiVersion, kind, name, namespace). */
  async read<T extends KubernetesObject>(ref: T): Promise<T> {
    const metadata = { name: ref.metadata?.name ?? '', ...(ref.metadata?.namespace ? { namespace: ref.metadata.namespace } : {}) };
    return this.api.read<T>({ apiVersion: ref.apiVersion ?? '', kind: ref.kind ?? '', metadata });
  }
}
