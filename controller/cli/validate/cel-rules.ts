// The CRDs' x-kubernetes-validations (CEL) rules that apply to one object,
// read from the same schema the CRDs carry, and their verdict when a CEL
// engine is given. Without one they are reported as not checked offline,
// never as passed.
import type { FieldError } from './verdict.js';

/**
 * The seam for a CEL implementation (e.g. an adapter over @bufbuild/cel that
 * registers the Kubernetes library functions our rules use: isIP, ip(),
 * cidr(), url(), quantity, string extensions).
 */
export interface CelEngine {
  /** Whether `rule` holds with `self` bound; undefined when the engine cannot evaluate it. */
  evaluate(rule: string, self: unknown): boolean | undefined;
}

interface Rule {
  readonly rule: string;
  readonly message?: string;
  readonly fieldPath?: string;
}

interface SchemaNode {
  readonly properties?: Record<string, SchemaNode>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly 'x-kubernetes-validations'?: readonly Rule[];
}

export interface CelOutcome {
  readonly failed: FieldError[];
  readonly notChecked: FieldError[];
}

/** Transition rules compare with the stored object: a create (and offline) has none, and the API server skips them too. */
const isTransitionRule = (rule: string): boolean => /\boldSelf\b/.test(rule);

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

/** Every rule of `schema` whose node is present in `value`, with the node's field path. */
function applicableRules(schema: SchemaNode, value: unknown, path: string, out: { path: string; self: unknown; rule: Rule }[]): void {
  for (const rule of schema['x-kubernetes-validations'] ?? []) {
    if (!isTransitionRule(rule.rule)) out.push({ path, self: value, rule });
  }
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((item, i) => applicableRules(schema.items as SchemaNode, item, `${path}[${i}]`, out));
    return;
  }
  if (!value || typeof value !== 'object') return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    const sub = schema.properties?.[key] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    if (sub && child !== undefined && child !== null) applicableRules(sub, child, schema.properties?.[key] ? join(path, key) : `${path}[${key}]`, out);
  }
}

/** The CEL rules of `schema` on `obj`: failed ones (with an engine) and those not checked. */
export function checkCelRules(schema: unknown, obj: unknown, engine?: CelEngine): CelOutcome {
  const found: { path: string; self: unknown; rule: Rule }[] = [];
  applicableRules(schema as SchemaNode, obj, '', found);
  const outcome: CelOutcome = { failed: [], notChecked: [] };
  for (const { path, self, rule } of found) {
    const field = rule.fieldPath ? join(path, rule.fieldPath.replace(/^\./, '')) : path;
    const holds = engine?.evaluate(rule.rule, self);
    if (holds === undefined) outcome.notChecked.push({ field, message: `CEL rule not checked offline: ${rule.rule}` });
    else if (!holds) outcome.failed.push({ field, message: `Invalid value: ${rule.message ?? `failed rule: ${rule.rule}`}` });
  }
  return outcome;
}
