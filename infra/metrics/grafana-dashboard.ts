// The Grafana dashboard shipped with each release (make grafana-dashboard): work
// queues, reconciles, backend calls and VirtualMachines, read from the roles'
// /metrics. Every query is built from definitions.ts, and a label it groups or
// filters by is typed against that metric's labels, so a renamed metric or label
// does not compile; test/integration/grafana-dashboard.test.ts checks each
// query's metrics and labels against a live /metrics of the roles.
import { METRICS, PROCESS_METRICS, type MetricDefinition } from './definitions.js';

/**
 * Labels Prometheus adds to every series of a target (the Prometheus Operator's
 * ServiceMonitor relabeling, kube-prometheus' pod scrape configs): the
 * dashboard filters by namespace and tells replicas apart by pod.
 */
export const TARGET_LABELS = ['namespace', 'pod', 'job', 'instance', 'service', 'container', 'endpoint'] as const;
type TargetLabel = (typeof TARGET_LABELS)[number];

/** Grafana's variables in the queries: the rate window it picks, and the namespaces chosen. */
const RATE_WINDOW = '$__rate_interval';
const NAMESPACE_FILTER = 'namespace=~"$namespace"';

/** A series of `metric` (a histogram's `_bucket` with `suffix`) in the chosen namespaces, with `matchers` besides. */
function series(metric: MetricDefinition | string, suffix = '', matchers: readonly string[] = []): string {
  const name = typeof metric === 'string' ? metric : metric.name;
  return `${name}${suffix}{${[NAMESPACE_FILTER, ...matchers].join(', ')}}`;
}

function by<L extends string>(_metric: MetricDefinition<L> | string, labels: readonly (L | TargetLabel)[]): string {
  return `by (${labels.join(', ')})`;
}

/** `sum by (labels) (rate(metric[window]))`: events per second. */
function ratePerSecond<L extends string>(metric: MetricDefinition<L>, labels: readonly (L | TargetLabel)[], matchers: readonly string[] = []): string {
  return `sum ${by(metric, labels)} (rate(${series(metric, '', matchers)}[${RATE_WINDOW}]))`;
}

/** The `q` quantile of a histogram, per `labels`. */
function quantile<L extends string>(q: number, metric: MetricDefinition<L>, labels: readonly (L | TargetLabel)[]): string {
  return `histogram_quantile(${q}, sum by (le, ${labels.join(', ')}) (rate(${series(metric, '_bucket')}[${RATE_WINDOW}])))`;
}

/** `agg by (labels) (metric)` of a gauge. */
function gauge<L extends string>(agg: 'sum' | 'max', metric: MetricDefinition<L> | string, labels: readonly (L | TargetLabel)[]): string {
  return `${agg} ${by(metric, labels)} (${series(metric)})`;
}

export interface DashboardTarget {
  readonly refId: string;
  readonly expr: string;
  readonly legendFormat: string;
}

export interface DashboardPanel {
  readonly id: number;
  readonly type: 'timeseries' | 'row';
  readonly title: string;
  readonly description?: string;
  readonly gridPos: { readonly h: number; readonly w: number; readonly x: number; readonly y: number };
  readonly datasource?: { readonly type: 'prometheus'; readonly uid: '${datasource}' };
  readonly targets?: readonly DashboardTarget[];
  readonly fieldConfig?: { readonly defaults: { readonly unit: string; readonly custom?: Record<string, unknown> }; readonly overrides: readonly never[] };
  readonly options?: Record<string, unknown>;
  readonly collapsed?: boolean;
  readonly panels?: readonly never[];
}

interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly unit: string;
  /** [expr, legend] per query. */
  readonly queries: readonly (readonly [string, string])[];
  readonly stacked?: boolean;
}

interface RowSpec {
  readonly row: string;
  readonly panels: readonly PanelSpec[];
}

const ROWS: readonly RowSpec[] = [
  {
    row: 'Work queues',
    panels: [
      {
        title: 'Queue depth',
        description: 'Keys waiting in each controller’s work queue (name: the controller).',
        unit: 'short',
        queries: [[gauge('sum', METRICS.workqueueDepth, ['name']), '{{name}}']],
      },
      {
        title: 'Queue latency (p99)',
        description: 'How long a key waits in the queue before a worker takes it.',
        unit: 's',
        queries: [[quantile(0.99, METRICS.workqueueQueueDuration, ['name']), '{{name}}']],
      },
      {
        title: 'Work duration (p99)',
        description: 'How long a worker takes over one key.',
        unit: 's',
        queries: [[quantile(0.99, METRICS.workqueueWorkDuration, ['name']), '{{name}}']],
      },
      {
        title: 'Adds and retries',
        description: 'Keys added to each queue, and keys put back after a failed reconcile (rate-limited retries).',
        unit: 'ops',
        queries: [
          [ratePerSecond(METRICS.workqueueAdds, ['name']), '{{name}} adds'],
          [ratePerSecond(METRICS.workqueueRetries, ['name']), '{{name}} retries'],
        ],
      },
      {
        title: 'Longest running worker',
        description: 'The oldest reconcile still running per controller: a value that keeps growing is a stuck worker.',
        unit: 's',
        queries: [[gauge('max', METRICS.workqueueLongestRunning, ['name', 'pod']), '{{name}} {{pod}}']],
      },
    ],
  },
  {
    row: 'Reconciles',
    panels: [
      {
        title: 'Reconciles by result',
        description: 'Reconciles per second by controller and result.',
        unit: 'ops',
        queries: [[ratePerSecond(METRICS.reconcileTotal, ['controller', 'result']), '{{controller}} {{result}}']],
      },
      {
        title: 'Reconcile errors',
        description: 'Reconciles that threw, per second, by controller and error name (TransientError, …).',
        unit: 'ops',
        queries: [[ratePerSecond(METRICS.reconcileErrors, ['controller', 'kind']), '{{controller}} {{kind}}']],
      },
      {
        title: 'Reconcile duration (p99)',
        description: 'Time spent in one reconcile, per controller.',
        unit: 's',
        queries: [[quantile(0.99, METRICS.reconcileDuration, ['controller']), '{{controller}}']],
      },
    ],
  },
  {
    row: 'Backends',
    panels: [
      {
        title: 'Backend calls',
        description:
          'Calls the provider roles make to their backends per second, by backend (the Providers’ class) and outcome (ok, fault: the backend refused, error: no answer).',
        unit: 'ops',
        queries: [[ratePerSecond(METRICS.backendCalls, ['backend', 'outcome']), '{{backend}} {{outcome}}']],
      },
      {
        title: 'Backend errors',
        description: 'Calls that did not end ok, per second, by backend, method and outcome.',
        unit: 'ops',
        queries: [[ratePerSecond(METRICS.backendCalls, ['backend', 'method', 'outcome'], ['outcome!="ok"']), '{{backend}} {{method}} {{outcome}}']],
      },
      {
        title: 'Backend call latency (p99)',
        description: 'Time of one backend call, by backend (a long task is polled, so its calls stay short).',
        unit: 's',
        queries: [[quantile(0.99, METRICS.backendCallDuration, ['backend']), '{{backend}}']],
      },
    ],
  },
  {
    row: 'VirtualMachines and roles',
    panels: [
      {
        title: 'VirtualMachines by phase',
        description: 'VirtualMachines by phase (Pending, Provisioning, Ready, Paused, Deleting), as the leading controller counts them.',
        unit: 'short',
        stacked: true,
        queries: [[gauge('max', METRICS.virtualMachines, ['phase']), '{{phase}}']],
      },
      {
        title: 'Leaders',
        description: '1 for the replica of each role that holds its leader Lease.',
        unit: 'short',
        queries: [[gauge('max', METRICS.leader, ['role', 'pod']), '{{role}} {{pod}}']],
      },
      {
        title: 'API server writes',
        description: 'Writes the roles send to the API server per second, by verb.',
        unit: 'ops',
        queries: [[ratePerSecond(METRICS.apiWrites, ['verb']), '{{verb}}']],
      },
    ],
  },
  {
    row: 'Processes',
    panels: [
      {
        title: 'CPU',
        description: 'CPU seconds per second of each role’s process.',
        unit: 'short',
        queries: [[`sum by (pod) (rate(${series(PROCESS_METRICS.cpuSeconds)}[${RATE_WINDOW}]))`, '{{pod}}']],
      },
      {
        title: 'Resident memory',
        description: 'Resident memory of each role’s process.',
        unit: 'bytes',
        queries: [[gauge('max', PROCESS_METRICS.residentMemory, ['pod']), '{{pod}}']],
      },
      {
        title: 'Event loop lag (p99)',
        description: 'How late Node.js’ event loop runs its callbacks: a busy or blocked role.',
        unit: 's',
        queries: [[gauge('max', PROCESS_METRICS.eventLoopLag, ['pod']), '{{pod}}']],
      },
    ],
  },
];

const PANEL_WIDTH = 8;
const PANEL_HEIGHT = 8;
const GRID_WIDTH = 24;

function layOut(rows: readonly RowSpec[]): DashboardPanel[] {
  const panels: DashboardPanel[] = [];
  let y = 0;
  for (const { row, panels: specs } of rows) {
    panels.push({ id: panels.length + 1, type: 'row', title: row, gridPos: { h: 1, w: GRID_WIDTH, x: 0, y }, collapsed: false, panels: [] });
    y += 1;
    specs.forEach((spec, i) => {
      const x = (i * PANEL_WIDTH) % GRID_WIDTH;
      if (i > 0 && x === 0) y += PANEL_HEIGHT;
      panels.push({
        id: panels.length + 1,
        type: 'timeseries',
        title: spec.title,
        description: spec.description,
        gridPos: { h: PANEL_HEIGHT, w: PANEL_WIDTH, x, y },
        datasource: { type: 'prometheus', uid: '${datasource}' },
        targets: spec.queries.map(([expr, legendFormat], q) => ({ refId: String.fromCharCode(65 + q), expr, legendFormat })),
        fieldConfig: { defaults: { unit: spec.unit, ...(spec.stacked ? { custom: { stacking: { mode: 'normal', group: 'A' } } } : {}) }, overrides: [] },
        options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi', sort: 'desc' } },
      });
    });
    y += PANEL_HEIGHT;
  }
  return panels;
}

/** The dashboard's JSON model (Grafana 10 and later; import it, or provision it from a file). */
export function grafanaDashboard(version: string): Record<string, unknown> {
  return {
    uid: 'banlieue',
    title: 'banlieue',
    description: `banlieue ${version}: work queues, reconciles, backend calls and VirtualMachines (docs/metrics.md)`,
    tags: ['banlieue', 'cluster-api', 'virtual-machines'],
    editable: true,
    schemaVersion: 39,
    version: 1,
    refresh: '30s',
    time: { from: 'now-6h', to: 'now' },
    timezone: 'browser',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 },
        {
          name: 'namespace',
          label: 'Namespace',
          type: 'query',
          datasource: { type: 'prometheus', uid: '${datasource}' },
          // Every role serves its leader gauge: the namespaces banlieue runs in.
          query: { query: `label_values(${METRICS.leader.name}, namespace)`, refId: 'namespaces' },
          definition: `label_values(${METRICS.leader.name}, namespace)`,
          refresh: 2,
          includeAll: true,
          multi: true,
          // All: any namespace, and series without the label too.
          allValue: '.*',
          current: {},
          hide: 0,
        },
      ],
    },
    panels: layOut(ROWS),
  };
}
