// Where a VM that already runs stays: the scheduler checks its running
// placement against today's facts before anything else, and only a placement
// that is truly impossible is a reason to move it. Tie-breaks, new Providers
// or failure domains, capacity, image rows and labels on other objects never
// move a running VM: a move destroys its disks (docs/adr/0022).
//
// Impossible means one of:
// - its Provider no longer exists or is being deleted (someone allowed to
//   delete Providers asked);
// - its failure domain is no longer published and its machine reports the
//   backend unreachable (a withdrawn failure domain alone, e.g. over a
//   capacity threshold, means "place nothing new here");
// - spec.placement was changed since the VM was placed and now excludes
//   where it runs (the user asked). A selector that stops matching because
//   another object's labels changed is not the user's request.
import type { FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../infra/api/conditions.js';
import { filterByAntiAffinity } from './anti-affinity.js';
import { formatSelector, matchesSelector } from './label-selector.js';

/** Where the VM runs, as the machine it controls says, and what that machine reports. */
export interface RunningFacts {
  readonly providerName: string;
  readonly failureDomain: string;
  /** The machine reports its backend unreachable (its Ready reason and message); undefined otherwise. */
  readonly unreachable?: { readonly reason: string; readonly message: string };
  /** spec.placement differs from the one the machine was placed for (false when the machine does not say). */
  readonly placementChanged: boolean;
}

export interface RunningInput {
  readonly vm: VirtualMachine;
  readonly running: RunningFacts;
  /** The Providers of the VM's namespace. */
  readonly providers: readonly Provider[];
  /** The other VirtualMachines of the namespace, placed where their machines run; read only to judge a changed spec.placement. */
  readonly siblings: () => readonly VirtualMachine[];
}

export type RunningVerdict =
  /** The VM stays. `withdrawn`: its failure domain takes no new VM (said, not acted on). */
  | { readonly stays: true; readonly provider: Provider; readonly failureDomain?: FailureDomainStatus; readonly withdrawn?: string }
  | { readonly stays: false; readonly reason: ImpossibleReason; readonly message: string };

export type ImpossibleReason = typeof Reason.ProviderGone | typeof Reason.FailureDomainGone | typeof Reason.PlacementExcluded;

/** Whether the VM stays where `input.running` says it runs, or why it cannot. */
export function judgeRunningPlacement(input: RunningInput): RunningVerdict {
  const { running } = input;
  const provider = input.providers.find((p) => p.metadata.name === running.providerName);
  if (!provider) return impossible(Reason.ProviderGone, `Provider ${running.providerName} it runs on no longer exists`);
  if (provider.metadata.deletionTimestamp) return impossible(Reason.ProviderGone, `Provider ${running.providerName} it runs on is being deleted`);
  const failureDomain = provider.status?.failureDomains?.find((fd) => fd.name === running.failureDomain);
  if (!failureDomain && running.unreachable) {
    const why = running.unreachable.message === '' ? running.unreachable.reason : `${running.unreachable.reason}: ${running.unreachable.message}`;
    return impossible(
      Reason.FailureDomainGone,
      `failure domain ${running.failureDomain} is no longer published by Provider ${running.providerName} and its machine reports the backend unreachable (${why})`,
    );
  }
  if (running.placementChanged) {
    const excluded = whyExcluded(input, provider, failureDomain);
    if (excluded) return impossible(Reason.PlacementExcluded, excluded);
  }
  if (failureDomain) return { stays: true, provider, failureDomain };
  return { stays: true, provider, withdrawn: describeWithdrawal(provider, running.failureDomain) };
}

/** Which field of spec.placement (changed by the user) excludes where the VM runs; undefined when none does. */
function whyExcluded(input: RunningInput, provider: Provider, failureDomain: FailureDomainStatus | undefined): string | undefined {
  const placement = input.vm.spec.placement;
  const where = `${input.running.providerName}/${input.running.failureDomain}`;
  if (!matchesSelector(provider.metadata.labels, placement?.providerSelector)) {
    return `spec.placement.providerSelector ${formatSelector(placement?.providerSelector)} no longer matches Provider ${input.running.providerName} it runs on`;
  }
  // A withdrawn failure domain's labels are unknown: only the name can be judged, by anti-affinity.
  if (failureDomain && !matchesSelector(failureDomain.labels, placement?.failureDomainSelector)) {
    return `spec.placement.failureDomainSelector ${formatSelector(placement?.failureDomainSelector)} no longer matches failure domain ${where} it runs in`;
  }
  const here = failureDomain ?? { name: input.running.failureDomain };
  const apart = filterByAntiAffinity([{ provider, failureDomain: here }], { vm: input.vm, providers: input.providers, siblings: input.siblings() });
  return apart.ok ? undefined : `${apart.message}, and it runs in ${where}`;
}

/** Why a Provider no longer offers `failureDomain`, from its Ready condition when it says. */
function describeWithdrawal(provider: Provider, failureDomain: string): string {
  const name = provider.metadata.name ?? '';
  const ready = provider.status?.conditions?.find((c) => c.type === ConditionType.Ready && c.status === 'False');
  const why = ready ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : '';
  return `Provider ${name} no longer offers failure domain ${failureDomain} to new VMs${why}; the VM keeps running there and nothing new is placed there`;
}

function impossible(reason: ImpossibleReason, message: string): RunningVerdict {
  return { stays: false, reason, message };
}
