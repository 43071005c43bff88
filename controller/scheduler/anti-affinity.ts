// Required anti-affinity: a VM never shares a topology value (a failure-domain
// label, or its name) with an already scheduled VM that a term selects.
// `preferred` terms are accepted by the API but not enforced yet.
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { AntiAffinityTerm, VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Candidate } from './candidates.js';
import { compareText } from './compare-text.js';
import { formatSelector, labelValue, matchesSelector } from './label-selector.js';
import { isNonEmpty, type NonEmpty } from './non-empty.js';

/** The topology key that means the failure-domain name itself. */
export const NAME_TOPOLOGY_KEY = 'name';

export interface AntiAffinityContext {
  readonly vm: VirtualMachine;
  readonly siblings: readonly VirtualMachine[];
  /** Every Provider of the namespace: a sibling may sit on one this VM cannot use. */
  readonly providers: readonly Provider[];
}

export type AntiAffinityVerdict = { readonly ok: true; readonly candidates: NonEmpty<Candidate> } | { readonly ok: false; readonly message: string };

/** `candidates` less those blocked by a required term, order kept; or which term left none. */
export function filterByAntiAffinity(candidates: NonEmpty<Candidate>, context: AntiAffinityContext): AntiAffinityVerdict {
  let remaining = candidates;
  for (const [index, term] of (context.vm.spec.placement?.antiAffinity ?? []).entries()) {
    // The API server defaults mode to required.
    if (term.mode === 'preferred') continue;
    const blocked = blockedValues(term, context);
    const allowed = remaining.filter((c) => !isBlocked(topologyValue(c.failureDomain, term.topologyKey), blocked));
    if (!isNonEmpty(allowed)) return { ok: false, message: describeUnsatisfied(index, term, blocked) };
    remaining = allowed;
  }
  return { ok: true, candidates: remaining };
}

/** The value of `topologyKey` for a failure domain; undefined when it has none. */
export function topologyValue(failureDomain: FailureDomainStatus, topologyKey: string): string | undefined {
  return topologyKey === NAME_TOPOLOGY_KEY ? failureDomain.name : labelValue(failureDomain.labels, topologyKey);
}

/** Topology values taken by the siblings `term` selects, each with the names of the VMs holding it. */
function blockedValues(term: AntiAffinityTerm, context: AntiAffinityContext): Map<string, string[]> {
  const blocked = new Map<string, string[]>();
  for (const sibling of context.siblings) {
    if (sibling.metadata.name === context.vm.metadata.name) continue;
    if (!matchesSelector(sibling.metadata.labels, term.labelSelector)) continue;
    const value = siblingTopologyValue(sibling, term.topologyKey, context.providers);
    if (value !== undefined) blocked.set(value, [...(blocked.get(value) ?? []), sibling.metadata.name ?? '']);
  }
  return blocked;
}

/**
 * A sibling's value of `topologyKey`, from the failure domain its Provider publishes now; for
 * `name` the recorded placement is enough. Undefined while it is not placed.
 */
export function siblingTopologyValue(sibling: VirtualMachine, topologyKey: string, providers: readonly Provider[]): string | undefined {
  const scheduled = sibling.status?.scheduled;
  if (!scheduled) return undefined;
  if (topologyKey === NAME_TOPOLOGY_KEY) return scheduled.failureDomain;
  const provider = providers.find((p) => p.metadata.name === scheduled.providerName);
  const failureDomain = provider?.status?.failureDomains?.find((fd) => fd.name === scheduled.failureDomain);
  return failureDomain ? topologyValue(failureDomain, topologyKey) : undefined;
}

// A failure domain without the key shares no value with anyone.
function isBlocked(value: string | undefined, blocked: ReadonlyMap<string, readonly string[]>): boolean {
  return value !== undefined && blocked.has(value);
}

function describeUnsatisfied(index: number, term: AntiAffinityTerm, blocked: ReadonlyMap<string, readonly string[]>): string {
  const values = [...blocked.entries()]
    .sort(([a], [b]) => compareText(a, b))
    .map(([value, vms]) => `"${value}" (${[...vms].sort(compareText).join(', ')})`)
    .join(', ');
  const subject = `spec.placement.antiAffinity[${index}] (topologyKey "${term.topologyKey}", labelSelector ${formatSelector(term.labelSelector)})`;
  return `${subject} leaves no failure domain: ${term.topologyKey} values taken by matching VirtualMachines: ${values}`;
}
