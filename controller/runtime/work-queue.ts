// The one work queue: keys, not events. A key queued twice is processed once;
// a key is never processed by two workers at once (a key added while it is
// being processed runs again right after); failures retry with per-key
// exponential backoff, and so does work that reports itself blocked (a spec
// that cannot work until someone fixes it); delayed adds keep the earliest
// deadline; a key added as new (an object just created) is taken before the
// others. A key backing off is not run early by an add that is not its own
// object's change, so events on sibling objects cannot run a failing key again
// and again. Workers get an AbortSignal that shutDown() aborts, so in-flight
// work ends promptly.
// Metrics go through optional hooks: the queue knows nothing of Prometheus.
import { Backoff } from './backoff.js';
import { systemClock, type Clock } from './clock.js';

/** What a queue reports as it works, e.g. to the workqueue_* metrics. */
export interface WorkQueueHooks {
  /** A key entered the queue (a key already waiting is not counted again). */
  readonly added?: () => void;
  /** Keys waiting for a worker, after each change. */
  readonly depth?: (keys: number) => void;
  /** A worker took a key that had waited `waitedMs` since it was added. */
  readonly started?: (waitedMs: number) => void;
  /** A worker finished a key after `workMs`, whatever the outcome. */
  readonly finished?: (workMs: number) => void;
  /** A failed key was scheduled again with backoff. */
  readonly retried?: () => void;
}

export interface WorkQueueOptions {
  /** Keys processed at the same time. @default 4 */
  readonly concurrency?: number;
  /** First retry delay after a failure. @default 1 s */
  readonly retryInitialMs?: number;
  /** Longest retry delay, of a failure or of blocked work. @default 5 min */
  readonly retryMaxMs?: number;
  /** Told of adds, waits, work and retries. @default none */
  readonly hooks?: WorkQueueHooks;
  /** Times waits and work for the hooks. @default systemClock */
  readonly clock?: Clock;
  /**
   * Keys are taken but no worker runs until start(): a role starts its
   * controllers once every cache they read has synced, as controller-runtime
   * does (a machine looked at before the Providers are listed would report its
   * Provider missing). @default false
   */
  readonly held?: boolean;
}

/** How a worker's pass over a key ended, when it did not throw. */
export interface WorkResult {
  /** Come back after this long; any add runs the key sooner. */
  readonly requeueAfterMs?: number;
  /**
   * Come back on this key's backoff, as after a failure, starting at this delay: the
   * work cannot go on until someone fixes something (the backend refuses the spec).
   * The delay doubles at each blocked pass up to `retryMaxMs`, and only a change of
   * the object itself runs the key sooner.
   */
  readonly blockedRetryMs?: number;
  /** With `requeueAfterMs`: the pass waits on work it started, which is no success yet: a backoff from earlier failures holds. */
  readonly inProgress?: boolean;
}

/** Processes one key; `signal` aborts when the queue shuts down. */
export type Worker = (key: string, signal: AbortSignal) => Promise<WorkResult | void>;
export type FailureHandler = (key: string, err: unknown, retryInMs: number) => void;

export interface AddOptions {
  /**
   * The key names an object just created: its first pass goes ahead of keys
   * already waiting (a burst of updates does not hold up a new object's first
   * pass, which is what stamps it as taken in hand). Implies `changed`. @default false
   */
  readonly new?: boolean;
  /**
   * The key's own object changed (its spec or generation, deletion, metadata its
   * worker reads): run it even while it backs off after a failure, since this change
   * may be the fix. Without it an add leaves a backing-off key to its deadline: the
   * same failure would come back at once, and other objects' events (a sibling, a
   * resync) would otherwise turn a backoff into a hot loop. @default false
   */
  readonly changed?: boolean;
}

/** When a key runs again after a pass; `backoff`: on its failure (or blocked) backoff, which only its own change cuts short. */
interface NextRun {
  readonly inMs: number;
  readonly backoff: boolean;
}

export class WorkQueue {
  /** New objects' keys, taken before `ready`. */
  private readonly fresh: string[] = [];
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  /** In-flight keys and when their worker started. */
  private readonly processing = new Map<string, number>();
  private readonly dirty = new Set<string>();
  /** Dirty keys whose own object changed meanwhile: they rerun at once even after a failure. */
  private readonly dirtyByChange = new Set<string>();
  /** When each waiting key (ready or dirty) was added, for the queue-duration hook. */
  private readonly addedAt = new Map<string, number>();
  /** `backoff`: the delay is a failure's (or blocked work's) backoff, which only the key's own change cuts short. */
  private readonly delayed = new Map<string, { at: number; timer: NodeJS.Timeout; backoff: boolean }>();
  /** Per key, from its first failure (or blocked pass) until a pass that succeeds (not one still in progress), or a change of its own object. */
  private readonly failures = new Map<string, Backoff>();
  private readonly concurrency: number;
  private readonly hooks: WorkQueueHooks;
  private readonly clock: Clock;
  private readonly lifetime = new AbortController();
  private stopped = false;
  private held: boolean;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly worker: Worker,
    private readonly options: WorkQueueOptions = {},
    private readonly onFailure: FailureHandler = () => undefined,
  ) {
    this.concurrency = options.concurrency ?? 4;
    this.hooks = options.hooks ?? {};
    this.clock = options.clock ?? systemClock;
    this.held = options.held ?? false;
    this.reportDepth();
  }

  /** Lets the workers run (a queue made `held`). */
  start(): void {
    this.held = false;
    this.pump();
  }

  add(key: string, options: AddOptions = {}): void {
    if (this.stopped) return;
    const ownChange = options.changed === true || options.new === true;
    // Backing off: its retry is already scheduled, and only its own change may be the fix.
    if (!ownChange && this.delayed.get(key)?.backoff) return;
    // A change of its own object may be the fix: tried again from the first delay.
    if (ownChange) this.failures.delete(key);
    this.cancelDelay(key);
    if (ownChange && this.dirty.has(key)) this.dirtyByChange.add(key);
    if (this.queued.has(key) || this.dirty.has(key)) return;
    this.addedAt.set(key, this.now());
    this.hooks.added?.();
    if (this.processing.has(key)) {
      this.dirty.add(key);
      if (ownChange) this.dirtyByChange.add(key);
    } else this.enqueue(key, options.new ?? false);
    this.reportDepth();
    this.pump();
  }

  addAfter(key: string, delayMs: number): void {
    this.schedule(key, delayMs, false);
  }

  get length(): number {
    return this.fresh.length + this.ready.length;
  }

  /** How long each in-flight key has been processed so far (unfinished-work metrics). */
  inFlightMs(): number[] {
    const now = this.now();
    return [...this.processing.values()].map((startedAt) => now - startedAt);
  }

  /** Resolves when nothing is queued or in flight (tests, graceful shutdown). */
  idle(): Promise<void> {
    if (this.length === 0 && this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Stop taking keys and abort the signal of in-flight work; resolves once
   * that work has settled. Work that rejects after the abort is not reported
   * as a failure.
   */
  async shutDown(): Promise<void> {
    this.stopped = true;
    this.lifetime.abort();
    for (const { timer } of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    this.fresh.length = 0;
    this.ready.length = 0;
    this.queued.clear();
    this.dirty.clear();
    this.dirtyByChange.clear();
    this.addedAt.clear();
    this.reportDepth();
    if (this.processing.size > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private enqueue(key: string, isNew = false): void {
    this.queued.add(key);
    (isNew ? this.fresh : this.ready).push(key);
  }

  private reportDepth(): void {
    // A dirty key waits too: it runs again as soon as its current run ends.
    this.hooks.depth?.(this.length + this.dirty.size);
  }

  /** A delayed add; `backoff` marks a failure's retry, which holds against adds that are not the key's own change. */
  private schedule(key: string, delayMs: number, backoff: boolean): void {
    if (this.stopped) return;
    if (delayMs <= 0 && !backoff) return this.add(key);
    const at = Date.now() + delayMs;
    const existing = this.delayed.get(key);
    // Plain delayed adds keep the earliest deadline and never cut a backoff short; a new backoff is the one that counts.
    if (existing && !backoff && (existing.backoff || existing.at <= at)) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    timer.unref();
    this.delayed.set(key, { at, timer, backoff });
  }

  private cancelDelay(key: string): void {
    const existing = this.delayed.get(key);
    if (existing) {
      clearTimeout(existing.timer);
      this.delayed.delete(key);
    }
  }

  private pump(): void {
    while (!this.stopped && !this.held && this.processing.size < this.concurrency && this.length > 0) {
      const key = (this.fresh.shift() ?? this.ready.shift()) as string;
      const now = this.now();
      this.queued.delete(key);
      this.processing.set(key, now);
      this.hooks.started?.(now - (this.addedAt.get(key) ?? now));
      this.addedAt.delete(key);
      this.reportDepth();
      void this.process(key);
    }
    if (this.length === 0 && this.processing.size === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async process(key: string): Promise<void> {
    const signal = this.lifetime.signal;
    let next: NextRun | undefined;
    try {
      next = this.nextAfterPass(key, await this.worker(key, signal));
    } catch (err) {
      // Work cut short by shutDown is neither a failure nor retried.
      if (!signal.aborted) next = { inMs: this.retry(key, err), backoff: true };
    } finally {
      this.settle(key, next);
    }
  }

  /** When a pass that returned `result` runs again: blocked, on its backoff; else as it asked, the backoff ended on success. */
  private nextAfterPass(key: string, result: WorkResult | void): NextRun | undefined {
    if (result?.blockedRetryMs !== undefined) return { inMs: this.backOff(key, result.blockedRetryMs), backoff: true };
    // Waiting on what it started (a clone task) is no success yet: the backoff holds, or a task the
    // backend fails every time would be started again at the first delay.
    if (result?.inProgress !== true) this.failures.delete(key);
    return result?.requeueAfterMs !== undefined ? { inMs: result.requeueAfterMs, backoff: false } : undefined;
  }

  /** The pass over `key` ended: report its time, then run it again at once (added meanwhile) or at `next`. */
  private settle(key: string, next: NextRun | undefined): void {
    this.hooks.finished?.(this.now() - (this.processing.get(key) ?? this.now()));
    this.processing.delete(key);
    const dirty = this.dirty.delete(key);
    const byChange = this.dirtyByChange.delete(key);
    // Already counted as added when it became dirty. A dirty rerun supersedes a requeue delay, and a
    // backoff only when the key's own object changed meanwhile: other events wait for its deadline.
    if (dirty && !this.stopped && (!next?.backoff || byChange)) this.enqueue(key);
    else if (next !== undefined) this.schedule(key, next.inMs, next.backoff);
    if (dirty && next?.backoff && !byChange) this.addedAt.delete(key);
    this.reportDepth();
    this.pump();
  }

  private retry(key: string, err: unknown): number {
    const retryInMs = this.backOff(key, this.options.retryInitialMs ?? 1000);
    this.hooks.retried?.();
    this.onFailure(key, err, retryInMs);
    return retryInMs;
  }

  /** The key's next backoff delay; its first failure (or blocked pass) sets where it starts. */
  private backOff(key: string, initialMs: number): number {
    let backoff = this.failures.get(key);
    if (!backoff) {
      backoff = new Backoff({ initialMs, maxMs: this.options.retryMaxMs ?? 300_000 });
      this.failures.set(key, backoff);
    }
    return backoff.next();
  }
}
