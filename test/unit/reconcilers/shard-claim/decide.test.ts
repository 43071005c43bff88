// What a role shard does about a claim on a Provider or a namespace (ADR 33).
import { describe, expect, it } from 'vitest';
import { decideShardClaim, type ClaimObservation } from '../../../../controller/reconcilers/shard-claim/decide.js';

const seen = (o: Partial<ClaimObservation>): ClaimObservation => ({ selected: true, claimedBy: undefined, claimantLive: false, busy: false, ...o });

describe('shard claims', () => {
  it.each<[string, ClaimObservation, ReturnType<typeof decideShardClaim>]>([
    ['claims what its selector takes that no shard holds', seen({}), 'claim'],
    ['keeps what it holds', seen({ claimedBy: 'me' }), 'none'],
    ['waits while a live shard holds what it takes', seen({ claimedBy: 'other', claimantLive: true }), 'wait'],
    ['takes over what a shard whose Lease lapsed or is gone holds', seen({ claimedBy: 'other', claimantLive: false }), 'claim'],
    ['lets go of what it no longer takes, once idle', seen({ selected: false, claimedBy: 'me' }), 'release'],
    ['holds what it no longer takes while its own pass on it runs', seen({ selected: false, claimedBy: 'me', busy: true }), 'wait'],
    ["leaves another shard's claim alone", seen({ selected: false, claimedBy: 'other', claimantLive: true }), 'none'],
    ['leaves alone what no shard holds and it does not take', seen({ selected: false }), 'none'],
  ])('%s', (_why, observation, expected) => {
    expect(decideShardClaim('me', observation)).toBe(expected);
  });
});
