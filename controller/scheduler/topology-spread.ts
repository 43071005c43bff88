// Topology spread (spec.placement.topologySpread), as kube-scheduler's
// PodTopologySpread scores nodes: for each constraint, the group is the
// namespace's VMs its labelSelector matches; a candidate's skew is the group's
// count at the candidate's topology value (this VM included when it matches)
// less the smallest count over the values the candidates offer. A skew over
// maxSkew is a violation; the scheduler prefers fewer violations, then a
// smaller skew (score.ts). It only ranks candidates: a VM is never refused
// or moved for it.
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import { siblingTopologyValue, topologyValue } from './anti-affinity.js';
import type { Candidate } from './candidates.js';
import { matchesSelector } from './label-selector.js';

export interface SpreadContext {
  readonly vm: VirtualMachine;
  readonly siblings: readonly VirtualMachine[];
  readonly providers: readonly Provider[];
}

/** How placing the VM in one candidate spreads its groups. */
export interface Spread {
  /** By how much the skews exceed maxSkew, summed over the constraints; a candidate without the key counts maxSkew + 1. */
  readonly excess: number;
  /** The skews summed over the constraints. */
  readonly skew: number;
  /** Per constraint, e.g. `skew 1 (maxSkew 1) over name`. */
  readonly said: readonly string[];
}

const UNSPREAD: Spread = { excess: 0, skew: 0, said: [] };

/** The spread of each candidate (same order), given every candidate the VM may use. */
export function spreadOf(candidates: readonly Candidate[], context: SpreadContext): Spread[] {
  const constraints = context.vm.spec.placement?.topologySpread ?? [];
  // Nothing to spread: every candidate alike, one object for all (thousands of candidates per decision).
  if (constraints.length === 0) return candidates.map(() => UNSPREAD);
  const perConstraint = constraints.map((constraint) => {
    const counts = new Map<string, number>();
    // Only the values some candidate offers: a value the VM cannot go to cannot be evened out.
    for (const c of candidates) {
      const value = topologyValue(c.failureDomain, constraint.topologyKey);
      if (value !== undefined) counts.set(value, 0);
    }
    for (const sibling of context.siblings) {
      if (sibling.metadata.name === context.vm.metadata.name || sibling.metadata.deletionTimestamp) continue;
      if (!matchesSelector(sibling.metadata.labels, constraint.labelSelector)) continue;
      const value = siblingTopologyValue(sibling, constraint.topologyKey, context.providers);
      if (value !== undefined && counts.has(value)) counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    const min = Math.min(...counts.values());
    const self = matchesSelector(context.vm.metadata.labels, constraint.labelSelector) ? 1 : 0;
    return { constraint, counts, min, self };
  });
  return candidates.map((candidate) => {
    let excess = 0;
    let skew = 0;
    const said: string[] = [];
    for (const { constraint, counts, min, self } of perConstraint) {
      const value = topologyValue(candidate.failureDomain, constraint.topologyKey);
      const count = value === undefined ? undefined : counts.get(value);
      if (count === undefined) {
        excess += constraint.maxSkew + 1;
        said.push(`no ${constraint.topologyKey} to spread over`);
        continue;
      }
      const after = count + self - min;
      skew += after;
      excess += Math.max(0, after - constraint.maxSkew);
      said.push(`skew ${after} (maxSkew ${constraint.maxSkew}) over ${constraint.topologyKey}`);
    }
    return { excess, skew, said };
  });
}
