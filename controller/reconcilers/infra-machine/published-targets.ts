// What a Provider lets its machines name (pure): the raw placement facts of its
// failure domains (status, as its provider discovered them), its capability
// classes' targets (spec, perZone ones too), the images VMImages give it (kind
// `image`: each one's source for its backend and its row's resolved ref) and
// its spec.allowedTargets; a name outside them is refused before any backend
// call, whatever the Provider's credentials could reach
// (docs/adr/0028-a-machine-names-only-what-its-provider-publishes.md).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { IMAGE_KIND, type NamedTarget } from '../../backends/named-targets.js';

/** allowedTargets' name that publishes every name of its kind. */
export const ANY_NAME = '*';

/** Names published, by kind of backend object. */
export type PublishedTargets = ReadonlyMap<string, ReadonlySet<string>>;

/** `images`: every VMImage (cluster-scoped, written by admins; their rows by the Providers' own providers). */
export function publishedTargets(provider: Provider, images: readonly VMImage[]): PublishedTargets {
  const published = new Map<string, Set<string>>();
  for (const [kind, name] of [...discovered(provider), ...classTargets(provider), ...imagesOf(provider, images), ...allowed(provider)]) {
    published.set(kind, (published.get(kind) ?? new Set<string>()).add(name));
  }
  return published;
}

type Named = readonly [kind: string, name: string];

/** The raw placement facts of its failure domains. */
function discovered(provider: Provider): Named[] {
  return (provider.status?.failureDomains ?? []).flatMap((domain) => Object.entries(domain.attributes?.raw ?? {}));
}

/** Every target of its storage and network classes, per-zone ones too. */
function classTargets(provider: Provider): Named[] {
  const { storageClasses = [], networkClasses = [] } = provider.spec.capabilities ?? {};
  return [...storageClasses, ...networkClasses].flatMap((c) => [c.target ?? {}, ...(c.perZone ?? []).map((z) => z.target)].flatMap((t) => Object.entries(t)));
}

/** Each VMImage's source for its backend, and the ref its row for this Provider resolved. */
function imagesOf(provider: Provider, images: readonly VMImage[]): Named[] {
  const { namespace = '', name = '' } = provider.metadata;
  return images.flatMap((image) => [
    ...image.spec.sources.filter((s) => s.providerClass === provider.spec.providerClassRef.name).map((s): Named => [IMAGE_KIND, s.ref]),
    ...(image.status?.perProvider ?? [])
      .filter((row) => row.providerNamespace === namespace && row.providerName === name && row.resolvedRef)
      .map((row): Named => [IMAGE_KIND, row.resolvedRef ?? '']),
  ]);
}

/** Its spec.allowedTargets. */
function allowed(provider: Provider): Named[] {
  return (provider.spec.allowedTargets ?? []).flatMap(({ kind, names }) => names.map((name): Named => [kind, name]));
}

/** The targets none of whose kinds publishes their name. */
export function unpublishedTargets(named: readonly NamedTarget[], published: PublishedTargets): NamedTarget[] {
  return named.filter((t) => !t.kinds.some((kind) => published.get(kind)?.has(t.value) === true || published.get(kind)?.has(ANY_NAME) === true));
}

/** Why the machine waits, naming each field and how an owner of the Provider publishes it. */
export function describeUnpublished(provider: string, unpublished: readonly NamedTarget[]): string {
  const each = unpublished.map((t) => `${t.field} "${t.value}" (${/^[aeiou]/.test(t.kinds[0]) ? 'an' : 'a'} ${t.kinds.join(' or ')})`).join(', ');
  return (
    `Provider ${provider} does not publish ${each}: nothing is created until it does ` +
    "(its owner lists it in the Provider's spec.allowedTargets or a capability class target, or discovery finds it; an image is also published by a VMImage source for its backend)"
  );
}
