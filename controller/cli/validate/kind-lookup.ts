// Which banlieue kind an object claims to be, and a "did you mean" when it
// is a near miss of one (a typo'd kind, a version we do not serve).
import { apiVersionOf, type KindDefinition } from '../../../infra/api/kind.js';
import type { FieldError } from './verdict.js';

export type KindLookup =
  | { readonly found: KindDefinition }
  /** Not a banlieue group: someone else's object (a Secret beside a Provider). */
  | { readonly foreign: true }
  | { readonly error: FieldError };

/** Levenshtein distance, case-insensitive: small kinds, small cost. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= y.length; j += 1) {
      next[j] = Math.min((row[j] ?? 0) + 1, (next[j - 1] ?? 0) + 1, (row[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[y.length] ?? 0;
}

function nearest(value: string, candidates: readonly string[]): string | undefined {
  const best = candidates.map((c) => ({ c, d: distance(value, c) })).sort((p, q) => p.d - q.d)[0];
  return best && best.d <= Math.max(2, Math.floor(value.length / 4)) ? best.c : undefined;
}

const didYouMean = (guess: string | undefined): string => (guess ? ` (did you mean ${JSON.stringify(guess)}?)` : '');

/** The kind definition of `apiVersion`/`kind` among `kinds`. */
export function lookupKind(apiVersion: unknown, kind: unknown, kinds: readonly KindDefinition[]): KindLookup {
  if (typeof apiVersion !== 'string' || apiVersion === '') return { error: { field: 'apiVersion', message: 'Required value: apiVersion must be set' } };
  if (typeof kind !== 'string' || kind === '') return { error: { field: 'kind', message: 'Required value: kind must be set' } };
  const groups = [...new Set(kinds.map((k) => k.group))];
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  if (!groups.includes(group as KindDefinition['group'])) {
    // A typo'd group of ours is ours; any other group is not our business.
    const guess = nearest(group, groups);
    if (!guess) return { foreign: true };
    return { error: { field: 'apiVersion', message: `Unsupported value: ${JSON.stringify(apiVersion)}: no such API group${didYouMean(guess)}` } };
  }
  const inGroup = kinds.filter((k) => k.group === group);
  const versions = [...new Set(inGroup.map(apiVersionOf))];
  if (!versions.includes(apiVersion)) {
    return {
      error: {
        field: 'apiVersion',
        message: `Unsupported value: ${JSON.stringify(apiVersion)}: supported versions: ${versions.map((v) => JSON.stringify(v)).join(', ')}`,
      },
    };
  }
  const found = inGroup.find((k) => k.kind === kind);
  if (found) return { found };
  const guess = nearest(
    kind,
    inGroup.map((k) => k.kind),
  );
  return {
    error: { field: 'kind', message: `Unsupported value: ${JSON.stringify(kind)}: no kind ${JSON.stringify(kind)} in ${apiVersion}${didYouMean(guess)}` },
  };
}
