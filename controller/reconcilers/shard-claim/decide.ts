// A role shard and its claims, pure (ADR 33): which objects a shard's selector takes, and what a
// shard does about an object's claim. Provider shards claim Providers; controller shards claim
// namespaces. Where a claim is kept is the claimed kind's (ClaimRecords); deciding is the same.
import type { LabelSelector } from '../../../infra/api/meta.js';
import { matchesSelector } from '../../scheduler/label-selector.js';

/** A shard: the objects `selector` matches, claimed under `shard` (its Lease name). */
export interface ShardScope {
  readonly selector: LabelSelector;
  readonly shard: string;
}

/** Whether a shard's selector takes an object (it serves it once it holds its claim). */
export function selects(scope: ShardScope, object: { readonly metadata: { readonly labels?: Record<string, string> } }): boolean {
  return matchesSelector(object.metadata.labels, scope.selector);
}

/** What a shard knows of an object when it decides about its claim. */
export interface ClaimObservation {
  /** Its selector takes the object. */
  readonly selected: boolean;
  /** The shard holding the claim, if any. */
  readonly claimedBy: string | undefined;
  /** That shard's Lease is held and renewed (judged only when another shard holds the claim). */
  readonly claimantLive: boolean;
  /** A pass of this shard on the object or what it serves through it is under way. */
  readonly busy: boolean;
}

/**
 * Claim an object the selector takes that no live shard holds; let go of one it no longer
 * takes once no pass of ours on it is under way, so that the next shard starts where ours
 * stopped (an object mid-task is picked up from its status, as after a restart); otherwise wait.
 */
export function decideShardClaim(shard: string, o: ClaimObservation): 'claim' | 'release' | 'wait' | 'none' {
  if (o.selected) {
    if (o.claimedBy === shard) return 'none';
    return o.claimedBy === undefined || !o.claimantLive ? 'claim' : 'wait';
  }
  if (o.claimedBy !== shard) return 'none';
  return o.busy ? 'wait' : 'release';
}
