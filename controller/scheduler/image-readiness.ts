// Whether a VMImage can be used on a Provider: it needs a source for the
// Provider's backend and a ready row that this Provider wrote (ADR-0015
// upstream: each provider applies only its own perProvider row).
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';

/** Why `image` is not usable on `provider`, as a short phrase; undefined when it is. */
export function whyImageNotReady(image: VMImage, provider: Provider): string | undefined {
  const backend = provider.spec.providerClassRef.name;
  if (!image.spec.sources.some((s) => s.providerClass === backend)) return `no source for backend ${backend}`;
  const row = image.status?.perProvider?.find((r) => r.providerNamespace === provider.metadata.namespace && r.providerName === provider.metadata.name);
  if (!row) return 'not reported by the Provider yet';
  if (row.ready) return undefined;
  const detail = [row.reason, row.message].filter((part) => part !== undefined && part !== '').join(': ');
  return detail === '' ? 'not ready' : `not ready (${detail})`;
}
