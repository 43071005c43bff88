// A provider role shard and its claims, pure (ADR 33): which Providers a shard's selector takes,
// which shard holds a Provider (its banlieue.io/provider-shard annotation), and what a shard does
// about a Provider's claim.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { LabelSelector } from '../../../infra/api/meta.js';
import { Annotation } from '../../../infra/api/well-known.js';
import { labelValue, matchesSelector } from '../../scheduler/label-selector.js';

/** A shard: the Providers `selector` matches, claimed under `shard` (its Lease name). */
export interface ShardScope {
  readonly selector: LabelSelector;
  readonly shard: string;
}

/** The shard holding a Provider's claim, if any. */
export function shardOf(provider: Provider): string | undefined {
  return labelValue(provider.metadata.annotations, Annotation.providerShard);
}

/** Whether a shard's selector takes a Provider (it serves it once it holds its claim). */
export function selectsProvider(scope: ShardScope, provider: Provider): boolean {
  return matchesSelector(provider.metadata.labels, scope.selector);
}

/** What a shard knows of a Provider when it decides about its claim. */
export interface ClaimObservation {
  /** Its selector takes the Provider. */
  readonly selected: boolean;
  /** The shard holding the claim, if any. */
  readonly claimedBy: string | undefined;
  /** That shard's Lease is held and renewed (judged only when another shard holds the claim). */
  readonly claimantLive: boolean;
  /** A pass of this shard on the Provider or one of its machines is under way. */
  readonly busy: boolean;
}

/**
 * Claim a Provider the selector takes that no live shard holds; let go of one it no longer
 * takes once no pass of ours on it is under way, so that the next shard starts where ours
 * stopped (a machine mid-task is picked up from its status, as after a restart); otherwise wait.
 */
export function decideShardClaim(shard: string, o: ClaimObservation): 'claim' | 'release' | 'wait' | 'none' {
  if (o.selected) {
    if (o.claimedBy === shard) return 'none';
    return o.claimedBy === undefined || !o.claimantLive ? 'claim' : 'wait';
  }
  if (o.claimedBy !== shard) return 'none';
  return o.busy ? 'wait' : 'release';
}
