// PromQL queries and Prometheus text expositions read for what they name: the
// metrics and labels a query selects and groups by (parsed with the Prometheus
// project's own grammar, @prometheus-io/lezer-promql), and the series and labels
// a /metrics endpoint serves. For checking a dashboard against live roles.
import { parser } from '@prometheus-io/lezer-promql';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

/** A vector selector: its metric name and the label names its matchers test. */
export interface Selector {
  readonly metric: string;
  readonly labels: readonly string[];
}

/** An aggregation's `by (...)` labels and the metrics of the expression it aggregates. */
export interface Grouping {
  readonly labels: readonly string[];
  readonly metrics: readonly string[];
}

export interface QueryNames {
  readonly selectors: readonly Selector[];
  readonly groupings: readonly Grouping[];
}

const childrenOf = (node: SyntaxNode, name: string): SyntaxNode[] => node.getChildren(name);

/** What `expr` selects and groups by; throws naming the position of a syntax error or of a selector without a metric name. */
export function namesInQuery(expr: string): QueryNames {
  const tree = parser.parse(expr);
  const text = (n: SyntaxNode): string => expr.slice(n.from, n.to);
  const selectors: Selector[] = [];
  const groupings: Grouping[] = [];
  const selectorsUnder = (node: SyntaxNode): Selector[] => {
    const found: Selector[] = [];
    const cursor = node.cursor();
    do {
      if (cursor.name === 'VectorSelector') found.push(selectorOf(cursor.node));
    } while (cursor.next() && cursor.from < node.to);
    return found;
  };
  const selectorOf = (node: SyntaxNode): Selector => {
    const identifier = node.getChild('Identifier');
    if (!identifier) throw new Error(`${expr}: the selector at ${node.from} names no metric (only {__name__=...} or {"name"} forms)`);
    const matchers = node.getChild('LabelMatchers');
    const labels = matchers ? childrenOf(matchers, 'UnquotedLabelMatcher').map((m) => text(m.getChild('LabelName') ?? m)) : [];
    return { metric: text(identifier), labels };
  };
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) throw new Error(`${expr}: PromQL syntax error at ${ref.from}: "${expr.slice(ref.from, ref.from + 20)}"`);
      if (ref.name === 'VectorSelector') selectors.push(selectorOf(ref.node));
      if (ref.name === 'AggregateExpr') {
        const grouping = ref.node.getChild('AggregateModifier')?.getChild('GroupingLabels');
        const body = ref.node.getChild('FunctionCallBody');
        if (grouping && body) {
          groupings.push({
            labels: childrenOf(grouping, 'LabelName').map(text),
            metrics: [...new Set(selectorsUnder(body).map((s) => s.metric))],
          });
        }
      }
    },
  });
  return { selectors, groupings };
}

/** The series names a text exposition serves (a histogram's _bucket, _sum and _count) and the label names seen on each one's samples. */
export interface Exposition {
  /** Every series name its # TYPE lines declare, sampled or not. */
  readonly series: ReadonlySet<string>;
  /** Label names by series name, from the samples present. */
  readonly labels: ReadonlyMap<string, ReadonlySet<string>>;
}

const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function readExposition(text: string): Exposition {
  const series = new Set<string>();
  const labels = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      const [, name = '', kind = ''] = type;
      for (const suffix of SUFFIXES[kind] ?? ['']) series.add(`${name}${suffix}`);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+/.exec(line);
    if (!sample) continue;
    const [, name = '', body = ''] = sample;
    const seen = labels.get(name) ?? new Set<string>();
    // name="value" pairs; a value may hold escaped quotes.
    for (const pair of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) seen.add(pair[1] ?? '');
    labels.set(name, seen);
  }
  return { series, labels };
}

/** Expositions of several processes as one: every series any serves, with the labels any carries. */
export function mergeExpositions(expositions: readonly Exposition[]): Exposition {
  const labels = new Map<string, Set<string>>();
  for (const e of expositions) {
    for (const [name, names] of e.labels) labels.set(name, new Set([...(labels.get(name) ?? []), ...names]));
  }
  return { series: new Set(expositions.flatMap((e) => [...e.series])), labels };
}

/**
 * What of `expr` an exposition does not serve: metrics it lacks, and labels that no
 * sample of the metric carries (`extraLabels`: those Prometheus adds to every
 * target). A metric served but without samples is listed in `unsampled`: its
 * labels cannot be checked.
 */
export function unservedNames(expr: string, exposition: Exposition, extraLabels: readonly string[]): { problems: string[]; unsampled: string[] } {
  const { selectors, groupings } = namesInQuery(expr);
  const problems: string[] = [];
  const unsampled = new Set<string>();
  const labelsOf = (metric: string): ReadonlySet<string> | undefined => exposition.labels.get(metric);
  for (const { metric, labels } of selectors) {
    if (!exposition.series.has(metric)) {
      problems.push(`metric ${metric} is not served`);
      continue;
    }
    const seen = labelsOf(metric);
    if (!seen) {
      unsampled.add(metric);
      continue;
    }
    for (const label of labels) if (!seen.has(label) && !extraLabels.includes(label)) problems.push(`${metric} has no label ${label}`);
  }
  for (const { labels, metrics } of groupings) {
    const sampled = metrics.filter((m) => labelsOf(m) !== undefined);
    if (sampled.length === 0) continue;
    for (const label of labels) {
      if (!extraLabels.includes(label) && !sampled.some((m) => labelsOf(m)?.has(label)))
        problems.push(`by (${label}): no label ${label} on ${metrics.join(', ')}`);
    }
  }
  return { problems, unsampled: [...unsampled] };
}
