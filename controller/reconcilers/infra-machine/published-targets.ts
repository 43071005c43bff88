// What a Provider lets its machines name (pure): the raw placement facts of its
// failure domains (status, as its provider discovered them), its capability
// classes' targets (spec, perZone ones too) and its spec.allowedTargets; a
// name outside them is refused before any backend call, whatever the
// Provider's credentials could reach (docs/adr/0028-providers-publish-targets.md).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { NamedTarget } from '../../backends/named-targets.js';

/** allowedTargets' name that publishes every name of its kind. */
export const ANY_NAME = '*';

/** Names published, by kind of backend object. */
export type PublishedTargets = ReadonlyMap<string, ReadonlySet<string>>;

export function publishedTargets(provider: Provider): PublishedTargets {
  const published = new Map<string, Set<string>>();
  const add = (kind: string, name: string): void => {
    const names = published.get(kind) ?? new Set<string>();
    names.add(name);
    published.set(kind, names);
  };
  for (const domain of provider.status?.failureDomains ?? []) {
    for (const [kind, name] of Object.entries(domain.attributes?.raw ?? {})) add(kind, name);
  }
  const { storageClasses = [], networkClasses = [] } = provider.spec.capabilities ?? {};
  for (const c of [...storageClasses, ...networkClasses]) {
    for (const target of [c.target ?? {}, ...(c.perZone ?? []).map((z) => z.target)]) {
      for (const [kind, name] of Object.entries(target)) add(kind, name);
    }
  }
  for (const { kind, names } of provider.spec.allowedTargets ?? []) for (const name of names) add(kind, name);
  return published;
}

/** The targets none of whose kinds publishes their name. */
export function unpublishedTargets(named: readonly NamedTarget[], published: PublishedTargets): NamedTarget[] {
  return named.filter((t) => !t.kinds.some((kind) => published.get(kind)?.has(t.value) === true || published.get(kind)?.has(ANY_NAME) === true));
}

/** Why the machine waits, naming each field and how an owner of the Provider publishes it. */
export function describeUnpublished(provider: string, unpublished: readonly NamedTarget[]): string {
  const each = unpublished.map((t) => `${t.field} "${t.value}" (a ${t.kinds.join(' or ')})`).join(', ');
  return (
    `Provider ${provider} does not publish ${each}: nothing is created until it does ` +
    "(its owner lists it in the Provider's spec.allowedTargets or a capability class target, or discovery finds it)"
  );
}
