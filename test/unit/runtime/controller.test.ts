import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Controller, type Reconciler } from '../../../controller/runtime/controller.js';
import { TransientError, done, type ReconcileResult } from '../../../controller/runtime/errors.js';
import { newLogger, type Logger } from '../../../controller/runtime/log.js';
import { Metrics } from '../../../controller/runtime/metrics.js';

/** A JSON logger whose lines the test reads back. */
function capturedLogger(): { log: Logger; lines: () => { level: string; msg: string }[] } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb): void {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const log = newLogger({ role: 'test', level: 'debug', destination });
  const lines = (): { level: string; msg: string }[] =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: string; msg: string });
  return { log, lines };
}

/** A reconciler built from one function, named `fake`. */
function fakeReconciler(reconcile: (key: string, signal: AbortSignal) => Promise<ReconcileResult>): Reconciler {
  return { name: 'fake', kind: 'Fake', reconcile: (key, _log, signal) => reconcile(key, signal) };
}

/** Resolves when `signal` aborts; rejects with its reason, as fetch and our clients do. */
const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

async function sample(metrics: Metrics, name: string): Promise<string> {
  return metrics.registry.getSingleMetricAsString(name);
}

describe('Controller cancellation', () => {
  it('aborts the signal of an in-flight reconcile on queue shutdown and waits for it to end', async () => {
    const { log } = capturedLogger();
    let started = false;
    let ended = false;
    const controller = new Controller(
      fakeReconciler(async (_key, signal) => {
        started = true;
        await untilAborted(signal).catch(() => undefined);
        ended = true;
        return done;
      }),
      new Metrics({ defaultMetrics: false }),
      log,
    );
    controller.enqueue('ns/a');
    await tick();
    expect(started).toBe(true);
    await controller.queue.shutDown();
    expect(ended).toBe(true);
  });

  it('neither logs as a failure nor retries nor counts as an error a reconcile rejected by the abort', async () => {
    const { log, lines } = capturedLogger();
    const metrics = new Metrics({ defaultMetrics: false });
    let calls = 0;
    const controller = new Controller(
      fakeReconciler((_key, signal) => {
        calls += 1;
        return untilAborted(signal);
      }),
      metrics,
      log,
      { retryInitialMs: 1 },
    );
    controller.enqueue('ns/a');
    await tick();
    await controller.queue.shutDown();
    await tick();

    expect(calls).toBe(1);
    expect(lines().filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    expect(lines().map((l) => l.msg)).toContain('Reconcile stopped by shutdown');
    expect(await sample(metrics, 'workqueue_retries_total')).not.toMatch(/name="fake"/);
    expect(await sample(metrics, 'banlieue_reconcile_errors_total')).not.toMatch(/controller="fake"/);
  });

  it('still logs and retries a failure that happened before any shutdown', async () => {
    const { log, lines } = capturedLogger();
    const metrics = new Metrics({ defaultMetrics: false });
    let calls = 0;
    const controller = new Controller(
      fakeReconciler(async () => {
        calls += 1;
        if (calls === 1) throw new TransientError('vCenter unreachable');
        return done;
      }),
      metrics,
      log,
      { retryInitialMs: 1, retryMaxMs: 2 },
    );
    controller.enqueue('ns/a');
    while (calls < 2) await new Promise((r) => setTimeout(r, 2));
    await controller.queue.idle();
    await controller.queue.shutDown();

    expect(
      lines()
        .filter((l) => l.level === 'warn')
        .map((l) => l.msg),
    ).toEqual(['Reconcile failed, retrying']);
    expect(await sample(metrics, 'workqueue_retries_total')).toContain('workqueue_retries_total{name="fake"} 1');
  });
});

describe('Controller workqueue metrics', () => {
  it('labels the workqueue_* series with the controller name', async () => {
    const { log } = capturedLogger();
    const metrics = new Metrics({ defaultMetrics: false });
    const controller = new Controller(
      fakeReconciler(async () => done),
      metrics,
      log,
      { concurrency: 1 },
    );
    // ns/b is added twice while it waits: one add.
    ['ns/a', 'ns/b', 'ns/b'].forEach((k) => controller.enqueue(k));
    await controller.queue.idle();
    await controller.queue.shutDown();

    expect(await sample(metrics, 'workqueue_adds_total')).toContain('workqueue_adds_total{name="fake"} 2');
    expect(await sample(metrics, 'workqueue_depth')).toContain('workqueue_depth{name="fake"} 0');
    expect(await sample(metrics, 'workqueue_queue_duration_seconds')).toContain('workqueue_queue_duration_seconds_count{name="fake"} 2');
    expect(await sample(metrics, 'workqueue_work_duration_seconds')).toContain('workqueue_work_duration_seconds_count{name="fake"} 2');
  });

  it('reports work in flight at scrape time as unfinished work and longest running processor', async () => {
    const { log } = capturedLogger();
    const metrics = new Metrics({ defaultMetrics: false });
    let t = 0;
    const clock = { now: (): Date => new Date(t) };
    const controller = new Controller(
      fakeReconciler((_key, signal) => untilAborted(signal)),
      metrics,
      log,
      { clock },
    );
    controller.enqueue('ns/a');
    t = 3000;
    controller.enqueue('ns/b');
    t = 5000;

    expect(await sample(metrics, 'workqueue_unfinished_work_seconds')).toContain('workqueue_unfinished_work_seconds{name="fake"} 7');
    expect(await sample(metrics, 'workqueue_longest_running_processor_seconds')).toContain('workqueue_longest_running_processor_seconds{name="fake"} 5');
    await controller.queue.shutDown();
    expect(await sample(metrics, 'workqueue_unfinished_work_seconds')).toContain('workqueue_unfinished_work_seconds{name="fake"} 0');
  });
});
