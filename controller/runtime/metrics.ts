// Prometheus metrics of one process (a registry object, passed down; no globals).
// The workqueue_* series keep controller-runtime's names and `name` label, so
// dashboards written for Go controllers read ours too.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { WorkQueueHooks } from './work-queue.js';

/**
 * Seconds: controller-runtime's decades up to 1000 s (it starts at 10 ns; our
 * clock counts milliseconds), with steps between.
 */
const WORKQUEUE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1000];

export class Metrics {
  readonly registry = new Registry();
  /** Each queue's in-flight work, read at scrape time (trackUnfinishedWork). */
  private readonly inFlight = new Map<string, () => number[]>();
  readonly reconcileTotal = new Counter({
    name: 'banlieue_reconcile_total',
    help: 'Reconciles by controller and result.',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'banlieue_reconcile_duration_seconds',
    help: 'Time spent in one reconcile.',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'banlieue_reconcile_errors_total',
    help: 'Failed reconciles by controller and error kind.',
    labelNames: ['controller', 'kind'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'banlieue_leader',
    help: '1 while this process holds the leader lease of its role.',
    labelNames: ['role'] as const,
    registers: [this.registry],
  });
  readonly virtualMachines = new Gauge({
    name: 'banlieue_virtualmachines',
    help: 'VirtualMachines by phase (leader only).',
    labelNames: ['phase'] as const,
    registers: [this.registry],
  });
  readonly apiWrites = new Counter({
    name: 'banlieue_api_writes_total',
    help: 'Writes this process sent to the API server, by verb.',
    labelNames: ['verb'] as const,
    registers: [this.registry],
  });

  readonly backendCalls = new Counter({
    name: 'banlieue_backend_calls_total',
    help: 'Calls a provider role made to its backend (vCenter, …), by method and outcome (ok, fault, error).',
    labelNames: ['backend', 'method', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly backendCallDuration = new Histogram({
    name: 'banlieue_backend_call_duration_seconds',
    help: 'Time of one backend call (a task is waited for by polling, so its calls are short).',
    labelNames: ['backend', 'method'] as const,
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly workqueueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly workqueueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly workqueueQueueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'] as const,
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueWorkDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'] as const,
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly workqueueUnfinishedWork: Gauge<'name'> = new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads.",
    labelNames: ['name'] as const,
    registers: [this.registry],
    collect: (): void => this.collectInFlight(this.workqueueUnfinishedWork, (ms) => ms.reduce((a, b) => a + b, 0)),
  });
  readonly workqueueLongestRunning: Gauge<'name'> = new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['name'] as const,
    registers: [this.registry],
    collect: (): void => this.collectInFlight(this.workqueueLongestRunning, (ms) => Math.max(0, ...ms)),
  });

  constructor(options: { defaultMetrics?: boolean } = {}) {
    // Named as every Prometheus client names them (process_*, nodejs_*): dashboards and alerts for them work as they are.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** Hooks feeding the workqueue_* series of the queue named `name` (its controller's name). */
  workQueueHooks(name: string): WorkQueueHooks {
    return {
      added: () => this.workqueueAdds.inc({ name }),
      depth: (keys) => this.workqueueDepth.set({ name }, keys),
      started: (waitedMs) => this.workqueueQueueDuration.observe({ name }, waitedMs / 1000),
      finished: (workMs) => this.workqueueWorkDuration.observe({ name }, workMs / 1000),
      retried: () => this.workqueueRetries.inc({ name }),
    };
  }

  /** Report the queue `name`'s in-flight work (durations in ms) at each scrape. */
  trackUnfinishedWork(name: string, inFlightMs: () => number[]): void {
    this.inFlight.set(name, inFlightMs);
  }

  private collectInFlight(gauge: Gauge<'name'>, combine: (ms: number[]) => number): void {
    for (const [name, inFlightMs] of this.inFlight) gauge.set({ name }, combine(inFlightMs()) / 1000);
  }
}
