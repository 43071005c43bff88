// Kubernetes label-selector semantics (apimachinery labels.Selector), for
// Providers, failure domains and anti-affinity terms.
import type { LabelSelector } from '../../infra/api/meta.js';
import { compareText } from './compare-text.js';

type Labels = Readonly<Record<string, string>>;
type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

/**
 * Whether `labels` satisfy `selector`: every matchLabels pair and every
 * matchExpressions requirement. An undefined or empty selector matches everything.
 */
export function matchesSelector(labels: Labels | undefined, selector: LabelSelector | undefined): boolean {
  if (!selector) return true;
  const present = labels ?? {};
  const pairsMatch = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labelValue(present, key) === value);
  return pairsMatch && (selector.matchExpressions ?? []).every((r) => matchesRequirement(present, r));
}

/** The value of label `key`, ignoring inherited properties (a label named `constructor` is data, not a method). */
export function labelValue(labels: Labels | undefined, key: string): string | undefined {
  return labels && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

function matchesRequirement(labels: Labels, requirement: Requirement): boolean {
  const value = labelValue(labels, requirement.key);
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    // As in Kubernetes, NotIn also matches objects that lack the key.
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
  }
}

/** kubectl's rendering (`app=web,tier in (a,b),!legacy`); `{}` for the empty selector. */
export function formatSelector(selector: LabelSelector | undefined): string {
  const pairs = Object.entries(selector?.matchLabels ?? {})
    .sort(([a], [b]) => compareText(a, b))
    .map(([key, value]) => `${key}=${value}`);
  const expressions = (selector?.matchExpressions ?? []).map(formatRequirement);
  const parts = [...pairs, ...expressions];
  return parts.length > 0 ? parts.join(',') : '{}';
}

function formatRequirement(requirement: Requirement): string {
  const values = `(${(requirement.values ?? []).join(',')})`;
  switch (requirement.operator) {
    case 'In':
      return `${requirement.key} in ${values}`;
    case 'NotIn':
      return `${requirement.key} notin ${values}`;
    case 'Exists':
      return requirement.key;
    case 'DoesNotExist':
      return `!${requirement.key}`;
  }
}
