// A provider role's rows of VMImage.status.perProvider: for each Provider of
// its backend, whether the image's source for that backend is usable there.
// Applied under the role's own field manager, so other backends' rows and the
// controller's conditions are untouched (list-map keyed by Provider).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { PerProviderImageStatus, VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../../infra/api/conditions.js';
import { describeBackendFailure } from '../backend-failure.js';
import type { RunningBackend } from '../../backends/descriptor.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, type ReconcileResult } from '../../runtime/errors.js';
import type { Informer } from '../../runtime/informer.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { containsAll } from '../../runtime/status-writer.js';
import { resolveConnection } from '../provider/connection.js';

export class ImageRowsReconciler implements Reconciler {
  readonly name = 'vmimage-rows';
  readonly kind = 'VMImage';

  constructor(
    private readonly backend: RunningBackend,
    private readonly images: Informer<VMImage>,
    private readonly providers: Informer<Provider>,
    private readonly api: KubeApi,
    private readonly ssa: ServerSideApply,
    private readonly recheckMs: number,
    /** The Providers whose rows this role writes (a scoped role: its own). @default all of its backend */
    private readonly serves: (provider: Provider) => boolean = () => true,
  ) {}

  async reconcile(key: string, log: Logger, signal?: AbortSignal): Promise<ReconcileResult> {
    const image = this.images.get(key);
    if (!image) return done;
    const source = image.spec.sources.find((s) => s.providerClass === this.backend.name);
    const mine = this.providers.list().filter((p) => p.spec.providerClassRef.name === this.backend.name && !p.spec.paused && this.serves(p));
    const rows = source ? await Promise.all(mine.map((p) => this.row(p, image, source, log, signal))) : [];
    const current = image.status?.perProvider ?? [];
    const unchanged = rows.every((row) =>
      current.some((c) => c.providerNamespace === row.providerNamespace && c.providerName === row.providerName && containsAll(c, row)),
    );
    const stale = current.some(
      (c) =>
        !rows.some((r) => r.providerNamespace === c.providerNamespace && r.providerName === c.providerName) &&
        mine.some((p) => p.metadata.name === c.providerName && p.metadata.namespace === c.providerNamespace),
    );
    if (!unchanged || stale) {
      await this.ssa.apply(
        { apiVersion: image.apiVersion, kind: image.kind, metadata: { name: image.metadata.name ?? '' }, status: { perProvider: rows } },
        { subresource: 'status' },
      );
      log.info({ rows: rows.length }, 'Updated image rows');
    }
    return { requeueAfterMs: this.recheckMs };
  }

  private async row(
    provider: Provider,
    image: VMImage,
    source: VMImage['spec']['sources'][number],
    log: Logger,
    signal: AbortSignal | undefined,
  ): Promise<PerProviderImageStatus> {
    const id = { providerNamespace: provider.metadata.namespace ?? '', providerName: provider.metadata.name ?? '' };
    const connection = await resolveConnection(this.api, provider, this.backend.credentialKeys);
    if (!connection.ok) return { ...id, ready: false, reason: connection.reason, message: connection.message };
    try {
      const found = await this.backend.resolveImage(provider, connection.connection, source, signal);
      return {
        ...id,
        ready: found.ready,
        ...(found.resolvedRef ? { resolvedRef: found.resolvedRef } : {}),
        ...(found.reason ? { reason: found.reason } : {}),
        ...(found.message ? { message: found.message } : {}),
        ...(image.metadata.generation !== undefined ? { observedGeneration: image.metadata.generation } : {}),
      };
    } catch (err) {
      if (signal?.aborted) throw err;
      const { reason, message } = describeBackendFailure(err, Reason.LookupFailed);
      log.warn({ backend: this.backend.name, reason, err: message }, 'Image lookup failed');
      return { ...id, ready: false, reason, message };
    }
  }
}
