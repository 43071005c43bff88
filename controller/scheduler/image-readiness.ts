// Whether a VMImage can be used on a Provider: it needs a source for the
// Provider's backend and a ready row that this Provider wrote (ADR-0015
// upstream: each provider applies only its own perProvider row).
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { PerProviderImageStatus, VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';

/**
 * An image's rows by Provider, read once per decision: each candidate then finds its Provider's row
 * at once rather than every candidate scanning every row (an image ready on hundreds of Providers).
 */
export class ImageRows {
  private readonly byProvider = new Map<string, PerProviderImageStatus>();

  constructor(readonly image: VMImage) {
    // The first row of a Provider counts, as the API server keeps one per key.
    for (const row of image.status?.perProvider ?? []) {
      const key = providerKey(row.providerNamespace, row.providerName);
      if (!this.byProvider.has(key)) this.byProvider.set(key, row);
    }
  }

  /** Why the image is not usable on `provider`, as a short phrase; undefined when it is. */
  whyNotReady(provider: Provider): string | undefined {
    const backend = provider.spec.providerClassRef.name;
    if (!this.image.spec.sources.some((s) => s.providerClass === backend)) return `no source for backend ${backend}`;
    const row = this.byProvider.get(providerKey(provider.metadata.namespace, provider.metadata.name));
    if (!row) return 'not reported by the Provider yet';
    if (row.ready) return undefined;
    const detail = [row.reason, row.message].filter((part) => part !== undefined && part !== '').join(': ');
    return detail === '' ? 'not ready' : `not ready (${detail})`;
  }
}

// Neither a namespace nor a name holds a slash.
const providerKey = (namespace: string | undefined, name: string | undefined): string => `${namespace ?? ''}/${name ?? ''}`;
