// `banlieue provider <backend> --provider <name>`: a role that serves one Provider
// of its namespace (a Cloud Hypervisor host serves its own, ADR 17) and leaves the
// others' Providers, image rows and machines to their own roles. Pure: which
// Provider, which machines; the role filters its queues with it.
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { resolveMachinePlacement } from '../reconcilers/infra-machine/placement.js';

/** The one Provider a role serves; undefined: every Provider of its backend. */
export type ProviderScope = string | undefined;

/** A machine as the scope reads it: its Provider reference and failure domain. */
export interface ScopedMachine {
  readonly metadata: { readonly namespace?: string };
  readonly spec: { readonly providerRef?: { readonly name: string }; readonly failureDomain?: string };
  /** Where its VM was created: that Provider's role serves it for good. */
  readonly status?: { readonly placement?: { readonly provider: string } };
}

export function servesProvider(scope: ProviderScope, provider: Provider): boolean {
  return scope === undefined || provider.metadata.name === scope;
}

/**
 * Whether the scoped role serves a machine: the one its VM was created on, else the one its placement resolves to our
 * Provider (spec.providerRef, else the Provider publishing its failure domain, else
 * the namespace's only Provider of the backend). A machine no Provider takes is
 * reported by one role only, the one serving the first Provider of the backend by
 * name, so two hosts never write the same refusal in turn.
 */
export function servesMachine(scope: ProviderScope, backend: string, machine: ScopedMachine, providers: readonly Provider[], failureDomain?: string): boolean {
  if (scope === undefined) return true;
  const recorded = machine.status?.placement?.provider;
  if (recorded !== undefined) return recorded === scope;
  const named = machine.spec.providerRef?.name;
  if (named !== undefined) return named === scope;
  const domain = failureDomain ?? machine.spec.failureDomain;
  const placement = resolveMachinePlacement({ backend, namespace: machine.metadata.namespace ?? '', ...(domain ? { failureDomain: domain } : {}), providers });
  if (placement.ok) return placement.provider.metadata.name === scope;
  const [first] = providers
    .filter((p) => p.spec.providerClassRef.name === backend)
    .map((p) => p.metadata.name ?? '')
    .sort();
  return first === scope;
}
