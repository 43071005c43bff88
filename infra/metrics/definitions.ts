// The metrics banlieue's roles serve on /metrics, defined once: the roles register
// them (controller/runtime/metrics.ts), the Grafana dashboard queries them
// (grafana-dashboard.ts) and docs/metrics.md documents them, all by these names.
// The workqueue_* series keep controller-runtime's names, help and `name` label,
// so dashboards written for Go controllers read ours too.

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricDefinition<L extends string = string> {
  /** The Prometheus metric name (a histogram's series add _bucket, _sum, _count). */
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labelNames: readonly L[];
}

const define = <L extends string>(definition: MetricDefinition<L>): MetricDefinition<L> => definition;

export const METRICS = {
  reconcileTotal: define({
    name: 'banlieue_reconcile_total',
    type: 'counter',
    help: 'Reconciles by controller and result.',
    labelNames: ['controller', 'result'],
  }),
  reconcileDuration: define({
    name: 'banlieue_reconcile_duration_seconds',
    type: 'histogram',
    help: 'Time spent in one reconcile.',
    labelNames: ['controller'],
  }),
  reconcileErrors: define({
    name: 'banlieue_reconcile_errors_total',
    type: 'counter',
    help: 'Failed reconciles by controller and error kind.',
    labelNames: ['controller', 'kind'],
  }),
  leader: define({
    name: 'banlieue_leader',
    type: 'gauge',
    help: '1 while this process holds the leader lease of its role.',
    labelNames: ['role'],
  }),
  virtualMachines: define({
    name: 'banlieue_virtualmachines',
    type: 'gauge',
    help: 'VirtualMachines by phase (leader only).',
    labelNames: ['phase'],
  }),
  apiWrites: define({
    name: 'banlieue_api_writes_total',
    type: 'counter',
    help: 'Writes this process sent to the API server, by verb.',
    labelNames: ['verb'],
  }),
  backendCalls: define({
    name: 'banlieue_backend_calls_total',
    type: 'counter',
    help: 'Calls a provider role made to its backend (vCenter, …), by method and outcome (ok, fault, error).',
    labelNames: ['backend', 'method', 'outcome'],
  }),
  backendCallDuration: define({
    name: 'banlieue_backend_call_duration_seconds',
    type: 'histogram',
    help: 'Time of one backend call (a task is waited for by polling, so its calls are short).',
    labelNames: ['backend', 'method'],
  }),
  workqueueDepth: define({
    name: 'workqueue_depth',
    type: 'gauge',
    help: 'Current depth of workqueue',
    labelNames: ['name'],
  }),
  workqueueAdds: define({
    name: 'workqueue_adds_total',
    type: 'counter',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'],
  }),
  workqueueQueueDuration: define({
    name: 'workqueue_queue_duration_seconds',
    type: 'histogram',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'],
  }),
  workqueueWorkDuration: define({
    name: 'workqueue_work_duration_seconds',
    type: 'histogram',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'],
  }),
  workqueueRetries: define({
    name: 'workqueue_retries_total',
    type: 'counter',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'],
  }),
  workqueueUnfinishedWork: define({
    name: 'workqueue_unfinished_work_seconds',
    type: 'gauge',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads.",
    labelNames: ['name'],
  }),
  workqueueLongestRunning: define({
    name: 'workqueue_longest_running_processor_seconds',
    type: 'gauge',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name'],
  }),
} as const;

/**
 * Standard process and Node.js metrics every role serves besides METRICS (prom-client's
 * default metrics, named as every Prometheus client names them), those the dashboard reads.
 */
export const PROCESS_METRICS = {
  cpuSeconds: 'process_cpu_seconds_total',
  residentMemory: 'process_resident_memory_bytes',
  eventLoopLag: 'nodejs_eventloop_lag_p99_seconds',
} as const;
