// The scheduler (upstream core §2.3): a pure function from a VM and what it
// refers to, to one (Provider, failure domain) or the reason none fits.
// Filters run in upstream order; survivors tie-break by (Provider name,
// failure-domain name). No scoring: Providers omit full failure domains.
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { type BackendName } from '../../infra/api/backends.js';
import type { ResolvedClass, VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { Reason } from '../../infra/api/conditions.js';
import { filterByAntiAffinity } from './anti-affinity.js';
import { checkCandidates, compareCandidates, listCandidates, type Candidate } from './candidates.js';
import { explainNoFit } from './explain-no-fit.js';
import { isNonEmpty, type NonEmpty } from './non-empty.js';
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
  return { ok: true, placement: toPlacement(tieBreak(allowed.candidates), input) };
}

/** The first candidate by (Provider name, failure-domain name). */
function tieBreak(candidates: NonEmpty<Candidate>): Candidate {
  return candidates.reduce((first, next) => (compareCandidates(next, first) < 0 ? next : first));
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
