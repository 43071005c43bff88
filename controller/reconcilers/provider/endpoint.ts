// One backend endpoint, however a Provider spells it: two Providers naming one
// backend instance would both manage the same VMs' inventory, and their sweeps
// and adoptions could fight.
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { claimedFirst } from '../held-claims.js';

/** The port each backend's endpoint schemes imply when the endpoint names none (https: 443, …), from the backend list. */
const DEFAULT_PORTS: ReadonlyMap<string, number> = new Map(
  BACKEND_APIS.flatMap((b) => b.endpoint.schemes.flatMap((s) => (s.defaultPort === undefined ? [] : [[s.scheme, s.defaultPort] as const]))),
);

/**
 * `endpoint` in one spelling: scheme and host lower-case, the scheme's default
 * port written out, no user (one host whoever logs in), no trailing slash. An
 * endpoint that is not a URL is compared as written.
 */
export function normalizedEndpoint(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint.trim());
  } catch {
    return endpoint.trim();
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  const host = url.hostname.toLowerCase();
  const port = url.port || String(DEFAULT_PORTS.get(scheme) ?? '');
  const path = url.pathname.replace(/\/+$/, '');
  return `${scheme}://${host}${port ? `:${port}` : ''}${path}${url.search}`;
}

/** Whether two endpoints name one backend. */
export function sameEndpoint(a: string, b: string): boolean {
  return normalizedEndpoint(a) === normalizedEndpoint(b);
}

/**
 * The oldest other Provider naming `provider`'s endpoint, if one is older than
 * `provider` (held-claims.ts order): only the later of two is told.
 */
export function findOlderOnEndpoint(provider: Provider, providers: readonly Provider[]): Provider | undefined {
  const endpoint = normalizedEndpoint(provider.spec.connection.endpoint);
  return providers
    .filter((other) => other.metadata.uid !== provider.metadata.uid && normalizedEndpoint(other.spec.connection.endpoint) === endpoint)
    .filter((other) => claimedFirst(other, provider))
    .sort((a, b) => (claimedFirst(a, b) ? -1 : 1))[0];
}
