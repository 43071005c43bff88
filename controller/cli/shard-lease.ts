// The Lease of a role shard (`provider <backend> --provider-selector`, `controller
// --namespace-selector`, ADR 33): one per role and selector, so that N Deployments on N
// selectors each elect their own leader. A provider shard's Lease name is also the name its
// claims on Providers carry.
import { OBJECT_NAME_MAX, boundedName, sha256Hex } from '../../infra/api/bounded-name.js';
import type { LabelSelector } from '../../infra/api/meta.js';
import { compareText } from '../scheduler/compare-text.js';
import { formatSelector } from '../scheduler/label-selector.js';

/**
 * `<role Lease>-shard-<hash>`: the same for every spelling of one selector (a hash of its
 * canonical form), DNS-safe, within an object name's length.
 */
export function shardLeaseName(roleLease: string, selector: LabelSelector): string {
  return boundedName(`${roleLease}-shard-${sha256Hex(10)(canonicalSelector(selector))}`, OBJECT_NAME_MAX);
}

/** A selector in one spelling: `k=v` as `k in (v)`, requirements and their values sorted, duplicates gone. */
function canonicalSelector(selector: LabelSelector): string {
  const pairs = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => ({ key, operator: 'In' as const, values: [value] }));
  const requirements = [...pairs, ...(selector.matchExpressions ?? [])].map((r) => ({
    ...r,
    ...(r.values ? { values: [...new Set(r.values)].sort(compareText) } : {}),
  }));
  const texts = requirements.map((r) => formatSelector({ matchExpressions: [r] }));
  return [...new Set(texts)].sort(compareText).join(',');
}
