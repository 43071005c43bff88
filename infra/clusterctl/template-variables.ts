// clusterctl variables of the cluster templates. A template is built twice
// from the same code: once with every variable as its clusterctl placeholder
// (`${NAME}` or `${NAME:=default}`, the release asset) and once with sample
// values (checked against the API schema at synth). Substituting the samples
// into the first gives the second, which the tests check.
import { Document, isScalar, Scalar, visit } from 'yaml';

/** One clusterctl variable: its name, what it sets, and the value used when the template is checked. */
export interface ClusterctlVariable<T extends string | number> {
  readonly name: string;
  /** One line for `docs/cluster-api.md`. */
  readonly description: string;
  /** Written as `${NAME:=default}`, so clusterctl does not require it. @default none: required */
  readonly default?: T;
  /** The value the template is checked with when the variable has no default. */
  readonly sample: T;
  /** The clusterctl flag that sets it, when there is one. */
  readonly setBy?: string;
}

export type StringVariable = ClusterctlVariable<string> & { readonly type: 'string' };
export type IntegerVariable = ClusterctlVariable<number> & { readonly type: 'integer' };
export type TemplateVariable = StringVariable | IntegerVariable;

export function stringVariable(props: ClusterctlVariable<string>): StringVariable {
  return { ...props, type: 'string' };
}

export function integerVariable(props: ClusterctlVariable<number>): IntegerVariable {
  if (props.default !== undefined && !Number.isInteger(props.default)) throw new Error(`${props.name}: default ${props.default} is not an integer`);
  return { ...props, type: 'integer' };
}

/** The placeholder clusterctl substitutes: `${NAME}`, or `${NAME:=default}` when the variable has a default. */
export function placeholder(v: TemplateVariable): string {
  return v.default === undefined ? `\${${v.name}}` : `\${${v.name}:=${v.default}}`;
}

/** What a template reads a variable through: its placeholder or its checked value, recording which it used. */
export interface VariableResolver {
  str(v: StringVariable): string;
  int(v: IntegerVariable): number;
  /** The variables read so far, in first-use order. */
  readonly used: readonly TemplateVariable[];
}

abstract class RecordingResolver implements VariableResolver {
  private readonly seen = new Map<string, TemplateVariable>();

  get used(): readonly TemplateVariable[] {
    return [...this.seen.values()];
  }

  str(v: StringVariable): string {
    this.record(v);
    return this.stringValue(v);
  }

  int(v: IntegerVariable): number {
    this.record(v);
    return this.integerValue(v);
  }

  protected abstract stringValue(v: StringVariable): string;
  protected abstract integerValue(v: IntegerVariable): number;

  private record(v: TemplateVariable): void {
    const known = this.seen.get(v.name);
    if (known && known !== v) throw new Error(`two clusterctl variables are named ${v.name}`);
    this.seen.set(v.name, v);
  }
}

/** Every variable as its clusterctl placeholder: what the release asset carries. */
export class PlaceholderResolver extends RecordingResolver {
  protected stringValue(v: StringVariable): string {
    return placeholder(v);
  }

  protected integerValue(v: IntegerVariable): number {
    // An integer field holds the placeholder text until clusterctl substitutes
    // it; templateYaml writes it unquoted so that it reads back as a number.
    return placeholder(v) as unknown as number;
  }
}

/** Every variable as the value a user would set (`values`), else its default, else its sample. */
export class ValueResolver extends RecordingResolver {
  constructor(private readonly values: Readonly<Record<string, string | number>> = {}) {
    super();
  }

  protected stringValue(v: StringVariable): string {
    return String(this.values[v.name] ?? v.default ?? v.sample);
  }

  protected integerValue(v: IntegerVariable): number {
    return Number(this.values[v.name] ?? v.default ?? v.sample);
  }
}

/**
 * The objects as one multi-document YAML for clusterctl: a scalar that is
 * exactly an integer variable's placeholder stays plain (it becomes a number
 * after substitution); any other string holding a placeholder is double-quoted
 * (it stays a string whatever the value, `123` or `true` included).
 */
export function templateYaml(objects: readonly unknown[], variables: readonly TemplateVariable[]): string {
  const integers = new Set(variables.filter((v) => v.type === 'integer').map(placeholder));
  return objects
    .map((obj) => {
      const doc = new Document(obj);
      visit(doc, {
        Scalar(_key, node) {
          if (!isScalar(node) || typeof node.value !== 'string' || !node.value.includes('${')) return;
          node.type = integers.has(node.value) ? Scalar.PLAIN : Scalar.QUOTE_DOUBLE;
        },
      });
      const text = doc.toString({ lineWidth: 0 });
      if (/\$(?!\{[A-Z0-9_]+(:=[^}]*)?\})/.test(text)) throw new Error('a literal $ in a cluster template: clusterctl would substitute it');
      return text;
    })
    .join('---\n');
}
