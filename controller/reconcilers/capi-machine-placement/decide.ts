// Failure domains for CAPI-owned machines that have none. CAPI spreads
// control-plane Machines over failure domains, but a MachineDeployment's
// Machines get none; banlieue places each such infrastructure machine in the
// least-used failure domain of its cluster (CAPMVM picks one at random).
import type { ClusterFailureDomain } from '../../../infra/api/machine-fields.js';
import { compareText } from '../../scheduler/compare-text.js';
import { PROVIDER_ATTRIBUTE } from '../infra-cluster/decide.js';

export interface MachinePlacementInput {
  /** The cluster's published failure domains (InfraCluster status). */
  readonly failureDomains: readonly ClusterFailureDomain[];
  /** Whether the machine belongs to the control plane. */
  readonly controlPlane: boolean;
  /** Failure domains of the cluster's other machines of the same group (deployment or control plane). */
  readonly peers: readonly (string | undefined)[];
  /** The machine's spec.providerRef, if set: only that Provider's failure domains qualify. */
  readonly providerName?: string;
}

export interface MachinePlacement {
  readonly failureDomain: string;
  /** The Provider that publishes it (the `provider` attribute), when known. */
  readonly providerName?: string;
}

/** The least-used eligible failure domain, ties broken by name; undefined when none is eligible. */
export function decideMachineFailureDomain(input: MachinePlacementInput): MachinePlacement | undefined {
  const eligible = input.failureDomains.filter(
    (fd) => (!input.controlPlane || fd.controlPlane !== false) && (!input.providerName || fd.attributes?.[PROVIDER_ATTRIBUTE] === input.providerName),
  );
  if (eligible.length === 0) return undefined;
  const load = new Map(eligible.map((fd) => [fd.name, 0]));
  for (const peer of input.peers) if (peer !== undefined && load.has(peer)) load.set(peer, (load.get(peer) ?? 0) + 1);
  const [best] = [...eligible].sort((a, b) => (load.get(a.name) ?? 0) - (load.get(b.name) ?? 0) || compareText(a.name, b.name));
  if (!best) return undefined;
  const providerName = best.attributes?.[PROVIDER_ATTRIBUTE];
  return { failureDomain: best.name, ...(providerName ? { providerName } : {}) };
}
