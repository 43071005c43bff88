// The syntax apimachinery gives label keys and values (validation.IsQualifiedName,
// IsValidLabelValue) and label selectors (labels.Parse), defined once: the offline
// validator and the roles' selector flags use it.
import type { LabelSelector } from './meta.js';

type Requirement = NonNullable<LabelSelector['matchExpressions']>[number];

/** A DNS-1123 subdomain (a label key's prefix, an object name). */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The name part of a qualified name (a label key after its prefix), at most 63 characters. */
export const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
/** A label value, at most 63 characters; empty is valid. */
export const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** The longest name part of a qualified name, and the longest label value. */
export const LABEL_PART_MAX = 63;
/** The longest DNS-1123 subdomain. */
export const SUBDOMAIN_MAX = 253;

/** Whether `key` is a label key: an optional DNS subdomain prefix and `/`, then a name part. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  const prefixOk = prefix === undefined || (prefix.length > 0 && prefix.length <= SUBDOMAIN_MAX && DNS1123_SUBDOMAIN.test(prefix));
  return prefixOk && name.length <= LABEL_PART_MAX && QUALIFIED_NAME_PART.test(name);
}

export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_PART_MAX && LABEL_VALUE.test(value);
}

/**
 * A selector written as kubectl's `-l` takes it (apimachinery labels.Parse): `k=v`, `k==v`, `k!=v`,
 * `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, joined by commas; `''` selects everything. Throws an
 * Error saying what is wrong where; the caller names the flag or field.
 */
export function parseSelector(text: string): LabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: Requirement[] = [];
  const tokens = new SelectorTokens(text);
  if (tokens.done()) return {};
  do {
    const requirement = parseRequirement(tokens);
    // Two values for one key with `=` select nothing, as Kubernetes' do: the second is an In.
    if (requirement.operator === 'In' && requirement.values?.length === 1 && requirement.equals && !Object.hasOwn(matchLabels, requirement.key))
      matchLabels[requirement.key] = requirement.values[0] ?? '';
    else matchExpressions.push({ key: requirement.key, operator: requirement.operator, ...(requirement.values ? { values: requirement.values } : {}) });
  } while (tokens.take(','));
  if (!tokens.done()) tokens.expect(',');
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

function parseRequirement(tokens: SelectorTokens): Requirement & { readonly equals?: boolean } {
  const negated = tokens.take('!');
  const key = tokens.word('a label key');
  if (!isLabelKey(key)) throw new Error(`"${key}" is not a label key (an optional DNS subdomain prefix and /, then at most 63 alphanumerics, '-', '_' or '.')`);
  if (negated) return { key, operator: 'DoesNotExist' };
  if (tokens.done() || tokens.peek(',')) return { key, operator: 'Exists' };
  if (tokens.take('!=')) return { key, operator: 'NotIn', values: [labelValueAt(tokens)] };
  if (tokens.take('==') || tokens.take('=')) return { key, operator: 'In', values: [labelValueAt(tokens)], equals: true };
  const op = tokens.word('=, ==, !=, in or notin');
  if (op !== 'in' && op !== 'notin') throw new Error(`after "${key}": expected =, ==, !=, in or notin, got "${op}"`);
  tokens.expect('(');
  const values = [labelValueAt(tokens)];
  while (tokens.take(',')) values.push(labelValueAt(tokens));
  tokens.expect(')');
  return { key, operator: op === 'in' ? 'In' : 'NotIn', values: [...new Set(values)] };
}

function labelValueAt(tokens: SelectorTokens): string {
  const value = tokens.word();
  if (!isLabelValue(value))
    throw new Error(`"${value}" is not a label value (at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)`);
  return value;
}

/** The selector's text, read token by token; blanks between tokens are skipped. */
class SelectorTokens {
  private at = 0;

  constructor(private readonly text: string) {
    this.skipBlanks();
  }

  done(): boolean {
    return this.at >= this.text.length;
  }

  peek(symbol: string): boolean {
    return this.text.startsWith(symbol, this.at);
  }

  take(symbol: string): boolean {
    if (!this.peek(symbol)) return false;
    this.at += symbol.length;
    this.skipBlanks();
    return true;
  }

  expect(symbol: string): void {
    if (!this.take(symbol)) throw new Error(`expected "${symbol}" at character ${this.at + 1} of "${this.text}"`);
  }

  /** A run of key or value characters; empty unless `what` says one is required. */
  word(what?: string): string {
    const match = /^[A-Za-z0-9_./-]*/.exec(this.text.slice(this.at))?.[0] ?? '';
    if (match === '' && what !== undefined) throw new Error(`expected ${what} at character ${this.at + 1} of "${this.text}"`);
    this.at += match.length;
    this.skipBlanks();
    return match;
  }

  private skipBlanks(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] ?? '')) this.at += 1;
  }
}
