// Ranking of the candidates that fit, best first: the fewest topology-spread
// violations (topology-spread.ts), then the most room left (capacity.ts: how
// many more VMs like this one fit, a Provider publishing no capacity last),
// then the smallest skew, then (Provider name, failure-domain name) so that
// equal candidates always give the same answer. The winner's ranking is said
// in the Scheduled condition.
import type { Candidate } from './candidates.js';
import { candidateName, compareCandidates } from './candidates.js';
import { describeLimits, type Room } from './capacity.js';
import type { NonEmpty } from './non-empty.js';
import type { Spread } from './topology-spread.js';

export interface Scored {
  readonly candidate: Candidate;
  readonly room: Extract<Room, { fits: true }>;
  readonly spread: Spread;
}

/** The best of `scored`, and a sentence saying why it won. */
export function pickBest(scored: NonEmpty<Scored>): { readonly best: Scored; readonly explanation: string } {
  // The first two of the ranking, in one pass (thousands of candidates per decision); an equal one ranks after those before it.
  let best = scored[0];
  let runnerUp: Scored | undefined;
  for (let i = 1; i < scored.length; i++) {
    const s = scored[i] as Scored;
    if (compareScored(s, best) < 0) [best, runnerUp] = [s, best];
    else if (!runnerUp || compareScored(s, runnerUp) < 0) runnerUp = s;
  }
  return { best, explanation: explain(best, runnerUp, scored.length) };
}

function compareScored(a: Scored, b: Scored): number {
  return a.spread.excess - b.spread.excess || compareHeadroom(a, b) || a.spread.skew - b.spread.skew || compareCandidates(a.candidate, b.candidate);
}

/** More headroom first; unknown (nothing published) after any known. */
function compareHeadroom(a: Scored, b: Scored): number {
  const ha = a.room.headroom ?? Number.NEGATIVE_INFINITY;
  const hb = b.room.headroom ?? Number.NEGATIVE_INFINITY;
  return ha === hb ? 0 : hb > ha ? 1 : -1;
}

function explain(best: Scored, runnerUp: Scored | undefined, count: number): string {
  const parts = [describeRoom(best), ...best.spread.said];
  const why = runnerUp
    ? `; best of ${count} that fit (next: ${candidateName(runnerUp.candidate)}, ${whyNotFirst(best, runnerUp)})`
    : '; the only one that fits';
  return `${parts.join(', ')}${why}`;
}

function describeRoom({ room }: Scored): string {
  if (room.headroom === undefined) return 'capacity not published';
  const more = room.headroom === Number.POSITIVE_INFINITY ? 'any number of' : String(room.headroom);
  return `room for ${more} more like it (${describeLimits(room.limits ?? [])})`;
}

/** The rank the runner-up lost on. */
function whyNotFirst(best: Scored, next: Scored): string {
  if (next.spread.excess !== best.spread.excess) return `${next.spread.said.join(', ')}`;
  if (compareHeadroom(best, next) !== 0) return describeRoom(next);
  if (next.spread.skew !== best.spread.skew) return `${next.spread.said.join(', ')}`;
  return 'equal, later by name';
}
