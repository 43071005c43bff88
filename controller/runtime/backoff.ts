// The one backoff: exponential with full jitter, named tunables, per caller.
export interface BackoffOptions {
  /** First delay. @default 500 ms */
  readonly initialMs?: number;
  /** Cap. @default 30 s */
  readonly maxMs?: number;
  /** Growth per failure. @default 2 */
  readonly factor?: number;
}

export class Backoff {
  private failures = 0;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;

  constructor(options: BackoffOptions = {}) {
    this.initialMs = options.initialMs ?? 500;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
  }

  /** Delay before the next attempt; each call counts one more failure. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.initialMs * this.factor ** this.failures);
    this.failures += 1;
    // Full jitter keeps many clients from retrying in lockstep after an outage.
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
  }

  reset(): void {
    this.failures = 0;
  }

  get attempts(): number {
    return this.failures;
  }
}

/** A promise that resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    timer.unref?.();
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
