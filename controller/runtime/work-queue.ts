// The one work queue: keys, not events. A key queued twice is processed once;
// a key is never processed by two workers at once (a key added while it is
// being processed runs again right after); failures retry with per-key
// exponential backoff; delayed adds keep the earliest deadline.
import { Backoff } from './backoff.js';

export interface WorkQueueOptions {
  /** Keys processed at the same time. @default 4 */
  readonly concurrency?: number;
  /** First retry delay after a failure. @default 1 s */
  readonly retryInitialMs?: number;
  /** Longest retry delay. @default 5 min */
  readonly retryMaxMs?: number;
}

export type Worker = (key: string) => Promise<{ requeueAfterMs?: number } | void>;
export type FailureHandler = (key: string, err: unknown, retryInMs: number) => void;

export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, Backoff>();
  private readonly concurrency: number;
  private stopped = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly worker: Worker,
    private readonly options: WorkQueueOptions = {},
    private readonly onFailure: FailureHandler = () => undefined,
  ) {
    this.concurrency = options.concurrency ?? 4;
  }

  add(key: string): void {
    if (this.stopped) return;
    this.cancelDelay(key);
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    this.pump();
  }

  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    if (delayMs <= 0) return this.add(key);
    const at = Date.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.delayed.set(key, { at, timer });
  }

  get length(): number {
    return this.ready.length;
  }

  /** Resolves when nothing is queued or in flight (tests, graceful shutdown). */
  idle(): Promise<void> {
    if (this.ready.length === 0 && this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stop taking keys; resolves once in-flight work has finished. */
  async shutDown(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.ready.length = 0;
    this.queued.clear();
    if (this.processing.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private cancelDelay(key: string): void {
    const existing = this.delayed.get(key);
    if (existing) {
      clearTimeout(existing.timer);
      this.delayed.delete(key);
    }
  }

  private pump(): void {
    while (!this.stopped && this.processing.size < this.concurrency && this.ready.length > 0) {
      const key = this.ready.shift() as string;
      this.queued.delete(key);
      this.processing.add(key);
      void this.process(key);
    }
    if (this.ready.length === 0 && this.processing.size === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async process(key: string): Promise<void> {
    let retryInMs: number | undefined;
    try {
      const result = await this.worker(key);
      this.failures.delete(key);
      retryInMs = result?.requeueAfterMs;
    } catch (err) {
      let backoff = this.failures.get(key);
      if (!backoff) {
        backoff = new Backoff({ initialMs: this.options.retryInitialMs ?? 1000, maxMs: this.options.retryMaxMs ?? 300_000 });
        this.failures.set(key, backoff);
      }
      retryInMs = backoff.next();
      this.onFailure(key, err, retryInMs);
    } finally {
      this.processing.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      else if (retryInMs !== undefined) this.addAfter(key, retryInMs);
      this.pump();
    }
  }
}
