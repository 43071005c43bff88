// What a provider role shard does about a Provider's claim (ADR 33).
import { describe, expect, it } from 'vitest';
import { decideShardClaim, type ClaimObservation } from '../../../../controller/reconcilers/provider-shard/decide.js';

const seen = (o: Partial<ClaimObservation>): ClaimObservation => ({ selected: true, claimedBy: undefined, claimantLive: false, busy: false, ...o });

describe('Provider shard claims', () => {
  it.each<[string, ClaimObservation, ReturnType<typeof decideShardClaim>]>([
    ['claims a Provider its selector takes that no shard holds', seen({}), 'claim'],
    ['keeps a Provider it holds', seen({ claimedBy: 'me' }), 'none'],
    ['waits while a live shard holds a Provider it takes', seen({ claimedBy: 'other', claimantLive: true }), 'wait'],
    ['takes over a Provider whose claimant Lease lapsed or is gone', seen({ claimedBy: 'other', claimantLive: false }), 'claim'],
    ['lets go of a Provider it no longer takes, once idle', seen({ selected: false, claimedBy: 'me' }), 'release'],
    ['holds a Provider it no longer takes while its own pass on it runs', seen({ selected: false, claimedBy: 'me', busy: true }), 'wait'],
    ["leaves another shard's Provider alone", seen({ selected: false, claimedBy: 'other', claimantLive: true }), 'none'],
    ['leaves an unclaimed Provider it does not take alone', seen({ selected: false }), 'none'],
  ])('%s', (_why, observation, expected) => {
    expect(decideShardClaim('me', observation)).toBe(expected);
  });
});
