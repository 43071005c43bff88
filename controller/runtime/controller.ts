// One controller: a keyed work queue in front of a reconciler, with the
// reconcile and workqueue metrics, a logger per reconcile and periodic resync.
// Watches map informer events to keys; the reconciler reads everything from
// caches. `queue.shutDown()` aborts the signal of in-flight reconciles and
// waits for them to settle.
import { randomUUID } from 'node:crypto';
import type { Logger } from './log.js';
import { TransientError, type ReconcileResult } from './errors.js';
import type { Metrics } from './metrics.js';
import { WorkQueue, type AddOptions, type WorkQueueOptions } from './work-queue.js';

export interface Reconciler {
  /** Controller name in metrics and logs, e.g. virtualmachine. */
  readonly name: string;
  /** Kind the keys name, for log fields (`VirtualMachine: "ns/name"`). */
  readonly kind: string;
  /**
   * Reconcile one key. `signal` aborts when the controller shuts down: pass it
   * to backend calls so the reconcile ends promptly. A reconcile that rejects
   * after the abort is neither logged as a failure nor retried.
   */
  reconcile(key: string, log: Logger, signal: AbortSignal): Promise<ReconcileResult>;
}

export interface ControllerOptions extends Omit<WorkQueueOptions, 'hooks'> {
  /** Re-run every known key this often even without events. @default 5 min */
  readonly resyncMs?: number;
}

export class Controller {
  readonly queue: WorkQueue;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly options: ControllerOptions = {},
  ) {
    const hooks = metrics.workQueueHooks(reconciler.name);
    this.queue = new WorkQueue(
      (key, signal) => this.runOnce(key, signal),
      { ...options, hooks },
      (key, err, retryInMs) => this.logFailure(key, err, retryInMs),
    );
    metrics.trackUnfinishedWork(reconciler.name, () => this.queue.inFlightMs());
  }

  enqueue(key: string, options?: AddOptions): void {
    this.queue.add(key, options);
  }

  /** Runs the key once `delayMs` from now, unless an add runs it sooner. */
  enqueueAfter(key: string, delayMs: number): void {
    this.queue.addAfter(key, delayMs);
  }

  /** Starts the workers of a controller made with `held` (once its caches have synced). */
  start(): void {
    this.queue.start();
  }

  /** Periodic resync over `keys()` until `signal` aborts. */
  startResync(keys: () => string[], signal: AbortSignal): void {
    const timer = setInterval(() => keys().forEach((k) => this.queue.add(k)), this.options.resyncMs ?? 300_000);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  private async runOnce(key: string, signal: AbortSignal): Promise<ReconcileResult> {
    const { name, kind } = this.reconciler;
    const log = this.log.child({ controller: name, reconcileID: randomUUID(), [kind]: key });
    const stop = this.metrics.reconcileDuration.startTimer({ controller: name });
    try {
      const result = await this.reconciler.reconcile(key, log, signal);
      this.metrics.reconcileTotal.inc({
        controller: name,
        result: result.requeueAfterMs !== undefined || result.blockedRetryMs !== undefined ? 'requeue' : 'success',
      });
      return result;
    } catch (err) {
      // Whatever the error says, it is the shutdown that ended this reconcile.
      if (signal.aborted) {
        log.debug({ err: err instanceof Error ? err.message : String(err) }, 'Reconcile stopped by shutdown');
        return {};
      }
      this.metrics.reconcileTotal.inc({ controller: name, result: 'error' });
      this.metrics.reconcileErrors.inc({ controller: name, kind: err instanceof Error ? err.name : 'Unknown' });
      // A spec that cannot work is not an error here: its reconciler says so in a condition and returns blocked (backend-failure.ts).
      throw err;
    } finally {
      stop();
    }
  }

  private logFailure(key: string, err: unknown, retryInMs: number): void {
    const message = err instanceof Error ? err.message : String(err);
    const level = err instanceof TransientError ? 'warn' : 'error';
    this.log[level]({ controller: this.reconciler.name, [this.reconciler.kind]: key, err: message, retryInMs }, 'Reconcile failed, retrying');
  }
}
