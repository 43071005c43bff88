// Prometheus metrics of one process (a registry object, passed down; no globals).
// Names, help and labels come from infra/metrics/definitions.ts, which the
// Grafana dashboard and docs/metrics.md read too.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { METRICS, type MetricDefinition } from '../../infra/metrics/definitions.js';
import type { WorkQueueHooks } from './work-queue.js';

/** A definition as prom-client takes it. */
const named = <L extends string>({ name, help, labelNames }: MetricDefinition<L>): { name: string; help: string; labelNames: readonly L[] } => ({
  name,
  help,
  labelNames,
});

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
    ...named(METRICS.reconcileTotal),
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    ...named(METRICS.reconcileDuration),
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    ...named(METRICS.reconcileErrors),
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    ...named(METRICS.leader),
    registers: [this.registry],
  });
  readonly virtualMachines = new Gauge({
    ...named(METRICS.virtualMachines),
    registers: [this.registry],
  });
  readonly apiWrites = new Counter({
    ...named(METRICS.apiWrites),
    registers: [this.registry],
  });

  readonly backendCalls = new Counter({
    ...named(METRICS.backendCalls),
    registers: [this.registry],
  });
  readonly backendCallDuration = new Histogram({
    ...named(METRICS.backendCallDuration),
    buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly workqueueDepth = new Gauge({
    ...named(METRICS.workqueueDepth),
    registers: [this.registry],
  });
  readonly workqueueAdds = new Counter({
    ...named(METRICS.workqueueAdds),
    registers: [this.registry],
  });
  readonly workqueueQueueDuration = new Histogram({
    ...named(METRICS.workqueueQueueDuration),
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueWorkDuration = new Histogram({
    ...named(METRICS.workqueueWorkDuration),
    buckets: WORKQUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workqueueRetries = new Counter({
    ...named(METRICS.workqueueRetries),
    registers: [this.registry],
  });
  readonly workqueueUnfinishedWork: Gauge<'name'> = new Gauge({
    ...named(METRICS.workqueueUnfinishedWork),
    registers: [this.registry],
    collect: (): void => this.collectInFlight(this.workqueueUnfinishedWork, (ms) => ms.reduce((a, b) => a + b, 0)),
  });
  readonly workqueueLongestRunning: Gauge<'name'> = new Gauge({
    ...named(METRICS.workqueueLongestRunning),
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
