// Prometheus metrics of one process (a registry object, passed down; no globals).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ReconcileOutcome = 'success' | 'error' | 'requeue';

export class Metrics {
  readonly registry = new Registry();
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

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'banlieue_process_' });
  }
}
