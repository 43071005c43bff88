// Values only one object may hold at a time (a static address on a network
// class, a fixed MAC on a backend endpoint): an object's claims are checked
// against what the others hold. Among objects neither of which holds its value
// yet, the older one wins, then the name: every pass, in whatever order the
// objects are reconciled, decides alike, and only the later one is held back.

/** What the rule reads of an object. */
export interface Claimant {
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string; readonly creationTimestamp?: string };
}

/** Another object and the values it holds. */
export interface Holder<O extends Claimant, C> {
  readonly holder: O;
  readonly claims: readonly C[];
}

/** A claim of the claimant's that another object already holds. */
export interface HeldClaim<O extends Claimant, C> {
  readonly claim: C;
  readonly holder: O;
}

/** Whether `a` claimed before `b`: older wins, then namespace and name. */
export function claimedFirst(a: Claimant, b: Claimant): boolean {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  return ta !== tb ? ta < tb : nameOf(a) < nameOf(b);
}

/** The first of `claims` that one of `holders` (the claimant itself skipped) holds, as `same` compares them. */
export function findHeldClaim<O extends Claimant, C>(
  claimant: O,
  claims: readonly C[],
  holders: readonly Holder<O, C>[],
  same: (a: C, b: C) => boolean,
): HeldClaim<O, C> | undefined {
  for (const claim of claims) {
    for (const { holder, claims: held } of holders) {
      if (isSameObject(holder, claimant)) continue;
      if (held.some((h) => same(h, claim))) return { claim, holder };
    }
  }
  return undefined;
}

function isSameObject(a: Claimant, b: Claimant): boolean {
  if (a.metadata.uid && b.metadata.uid) return a.metadata.uid === b.metadata.uid;
  return nameOf(a) === nameOf(b);
}

const nameOf = (o: Claimant): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
