// The scheduler (upstream core §2.3): a pure function from a VM and what it
// refers to, to one (Provider, failure domain) or the reason none fits.
// Filters run in upstream order, then required anti-affinity, then room
// (capacity.ts); the candidates left are scored (score.ts): topology spread,
// room left, then (Provider name, failure-domain name).
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { type BackendName } from '../../infra/api/backends.js';
import type { ResolvedClass, VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../infra/api/conditions.js';
import { filterByAntiAffinity } from './anti-affinity.js';
import { demandIn, indexPending, pendingDemand, roomFor } from './capacity.js';
import { computeEffectiveHardware } from './effective-hardware.js';
import { candidateName, checkCandidates, listCandidates, type Candidate } from './candidates.js';
import { explainNoFit, listCapped } from './explain-no-fit.js';
import { isNonEmpty, type NonEmpty } from './non-empty.js';
import { pickBest, type Scored } from './score.js';
import { spreadOf } from './topology-spread.js';
import { resolveNetworks, resolveStorage } from './resolve-class.js';
import { selectProviders } from './select-providers.js';

export interface ScheduleInput {
  readonly vm: VirtualMachine;
  /** The VMClass named by spec.classRef. */
  readonly vmClass: VMClass;
  /** The VMImage named by spec.imageRef. */
  readonly image: VMImage;
  /** The Providers in the VM's namespace. */
  readonly providers: readonly Provider[];
  /** The other VirtualMachines of the namespace; one named like `vm` is ignored. */
  readonly siblings: readonly VirtualMachine[];
  /** VMClasses by name: what the siblings not yet provisioned take from a failure domain. @default none known */
  readonly classOf?: (name: string) => VMClass | undefined;
  /** Where this process placed the VM a moment ago (its own decision, not the VM's status, which others may write): kept while it fits. */
  readonly decided?: { readonly providerName: string; readonly failureDomain: string };
}

export interface Placement {
  readonly providerName: string;
  readonly providerNamespace: string;
  readonly providerClass: BackendName;
  readonly failureDomain: FailureDomainStatus;
  /** One per class disk, in disk order. */
  readonly resolvedStorage: readonly ResolvedClass[];
  /** One per class interface, in interface order. */
  readonly resolvedNetworks: readonly ResolvedClass[];
  /** Why this candidate won (room, spread, what was left out for want of room), for the Scheduled condition; absent for a kept placement. */
  readonly explanation?: string;
}

export type ScheduleResult = { readonly ok: true; readonly placement: Placement } | { readonly ok: false; readonly reason: Reason; readonly message: string };

/** Where `input.vm` goes, or the Scheduled=False reason and message saying why nowhere. */
export function schedule(input: ScheduleInput): ScheduleResult {
  const selection = selectProviders(input.vm, input.providers);
  if (!selection.ok) return { ok: false, reason: Reason.NoProviderMatched, message: selection.message };
  const candidates = listCandidates(selection.providers);
  if (candidates.length === 0) {
    const names = selection.providers.map((p) => p.metadata.name ?? '').join(', ');
    return { ok: false, reason: Reason.NoFailureDomainMatched, message: `The matching Providers publish no failure domains yet: ${names}` };
  }
  const { survivors, rejections } = checkCandidates(candidates, input);
  if (!isNonEmpty(survivors)) return { ok: false, ...explainNoFit(input, selection.providers, rejections) };
  const allowed = filterByAntiAffinity(survivors, input);
  if (!allowed.ok) return { ok: false, reason: Reason.AntiAffinityUnsatisfied, message: allowed.message };
  const { fitting, full } = filterByRoom(allowed.candidates, input);
  const spreads = spreadOf(
    fitting.map((s) => s.candidate),
    input,
  );
  const scored = fitting.map((s, i): Scored => ({ ...s, spread: spreads[i] ?? { excess: 0, skew: 0, said: [] } }));
  if (!isNonEmpty(scored)) {
    return { ok: false, reason: Reason.InsufficientCapacity, message: `No failure domain has room for the VM: ${listCapped(full)}` };
  }
  const recorded = keptDecision(scored, input.decided);
  if (recorded) return { ok: true, placement: toPlacement(recorded.candidate, input) };
  const { best, explanation } = pickBest(scored);
  const leftOut = full.length > 0 ? `; without room: ${listCapped(full)}` : '';
  return { ok: true, placement: { ...toPlacement(best.candidate, input), explanation: `${explanation}${leftOut}` } };
}

/**
 * The candidate this process placed the VM in a moment ago, while it still fits: its machine may
 * not be in the cache yet, scores shift with every placement, and a second pass must not point
 * the machine it just created elsewhere.
 */
function keptDecision(scored: readonly Scored[], decided: ScheduleInput['decided']): Scored | undefined {
  if (!decided) return undefined;
  return scored.find((s) => s.candidate.provider.metadata.name === decided.providerName && s.candidate.failureDomain.name === decided.failureDomain);
}

/** The candidates with room for the VM (and how much), and why each other one has none. */
function filterByRoom(candidates: NonEmpty<Candidate>, input: ScheduleInput): { fitting: Omit<Scored, 'spread'>[]; full: string[] } {
  const fitting: Omit<Scored, 'spread'>[] = [];
  const full: string[] = [];
  const pending = indexPending(input.siblings);
  // Once per decision: the VM's hardware is the same in every candidate, only its storage targets differ.
  const hardware = computeEffectiveHardware(input.vm, input.vmClass);
  for (const candidate of candidates) {
    const demand = hardware.ok ? demandIn(hardware.hardware, candidate.provider, candidate.failureDomain) : undefined;
    const room = demand ? roomFor(candidate, demand, pendingDemand(candidate, pending, input.classOf ?? (() => undefined))) : { fits: true as const };
    if (room.fits) fitting.push({ candidate, room });
    else full.push(`${candidateName(candidate)}: ${room.why}`);
  }
  return { fitting, full };
}

function toPlacement({ provider, failureDomain }: Candidate, input: ScheduleInput): Placement {
  return {
    providerName: provider.metadata.name ?? '',
    providerNamespace: provider.metadata.namespace ?? input.vm.metadata.namespace ?? '',
    providerClass: provider.spec.providerClassRef.name,
    failureDomain,
    resolvedStorage: resolveStorage(provider, input.vmClass.spec.hardware.disks, failureDomain),
    resolvedNetworks: resolveNetworks(provider, input.vmClass.spec.network.interfaces, failureDomain),
  };
}
