// The one server-side-apply helper. Every writer applies with its own field
// manager (DESIGN §3), so ownership of each field is visible in managedFields.
import type { KubeApi, ObjectRef } from './kube-api.js';

export class ServerSideApply {
  constructor(
    private readonly api: KubeApi,
    private readonly fieldManager: string,
  ) {}

  /** Apply `desired` as this field manager; force takes over fields another manager set. */
  async apply<T extends ObjectRef>(desired: T, opts: { force?: boolean; dryRun?: boolean; subresource?: 'status' } = {}): Promise<T> {
    return this.api.request<T>('PATCH', await this.api.pathOf(desired, opts.subresource), {
      query: {
        fieldManager: this.fieldManager,
        force: String(opts.force ?? true),
        fieldValidation: 'Strict',
        dryRun: opts.dryRun ? 'All' : undefined,
      },
      body: desired,
      contentType: 'application/apply-patch+yaml',
    });
  }
}
