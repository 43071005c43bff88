// Which Providers, and so which machines, a provider role serves (pure; the role filters its
// queues with it on every pass): every Provider of its backend; one by name (`--provider`, a
// Cloud Hypervisor host's own, ADR 17); or a shard (`--provider-selector`, ADR 33): the
// Providers its label selector matches that it holds the claim on (the Provider's
// banlieue.io/provider-shard annotation), so that two shards never serve one Provider, even
// while a relabelled Provider moves from one to the other.
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { resolveMachinePlacement } from '../reconcilers/infra-machine/placement.js';
import { shardOf } from '../reconcilers/provider-shard/claims.js';
import { selects, type ShardScope } from '../reconcilers/shard-claim/decide.js';
import { compareText } from '../scheduler/compare-text.js';

export type { ShardScope };

/** Every Provider of the backend (undefined), the one named, or a shard's. */
export type ProviderScope = undefined | { readonly name: string } | ShardScope;

/** A machine as the scope reads it: its Provider reference and failure domain. */
export interface ScopedMachine {
  readonly metadata: { readonly namespace?: string };
  readonly spec: { readonly providerRef?: { readonly name: string }; readonly failureDomain?: string };
  /** Where its VM was created: that Provider's role serves it for good. */
  readonly status?: { readonly placement?: { readonly provider: string } };
}

export function isShard(scope: ProviderScope): scope is ShardScope {
  return scope !== undefined && 'shard' in scope;
}

export function servesProvider(scope: ProviderScope, provider: Provider): boolean {
  if (scope === undefined) return true;
  if (!isShard(scope)) return provider.metadata.name === scope.name;
  return selects(scope, provider) && shardOf(provider) === scope.shard;
}

/**
 * Whether the scoped role serves a machine: the one its VM was created on, else the one its
 * placement resolves to (spec.providerRef, else the Provider publishing its failure domain,
 * else the namespace's only Provider of the backend). A machine no Provider takes (or whose
 * Provider is gone, for a shard) is the role's that serves the first Provider of the backend
 * by name, so that one role alone reports it.
 */
export function servesMachine(scope: ProviderScope, backend: string, machine: ScopedMachine, providers: readonly Provider[], failureDomain?: string): boolean {
  return scope === undefined || servingProvider(scope, backend, machine, providers, failureDomain) !== undefined;
}

/** The name of the Provider through which a scoped role serves a machine (servesMachine); undefined when it does not. */
export function servingProvider(
  scope: Exclude<ProviderScope, undefined>,
  backend: string,
  machine: ScopedMachine,
  providers: readonly Provider[],
  failureDomain?: string,
): string | undefined {
  const ofBackend = providers.filter((p) => p.spec.providerClassRef.name === backend).sort((a, b) => compareText(a.metadata.name ?? '', b.metadata.name ?? ''));
  const on = machineProviderName(backend, machine, providers, failureDomain) ?? ofBackend[0]?.metadata.name;
  if (!isShard(scope)) return on === scope.name ? on : undefined;
  const provider = ofBackend.find((p) => p.metadata.name === on) ?? ofBackend[0];
  return provider !== undefined && servesProvider(scope, provider) ? provider.metadata.name : undefined;
}

/** The Provider a machine is on or resolves to, by name; undefined when none takes it. */
function machineProviderName(backend: string, machine: ScopedMachine, providers: readonly Provider[], failureDomain?: string): string | undefined {
  const known = machine.status?.placement?.provider ?? machine.spec.providerRef?.name;
  if (known !== undefined) return known;
  const domain = failureDomain ?? machine.spec.failureDomain;
  const placement = resolveMachinePlacement({ backend, namespace: machine.metadata.namespace ?? '', ...(domain ? { failureDomain: domain } : {}), providers });
  return placement.ok ? placement.provider.metadata.name : undefined;
}
