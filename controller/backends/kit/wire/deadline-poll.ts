// Waiting for a short backend task (a reconfigure, a power change) by reading it until it
// ends: the interval doubles from `initialPollMs` up to `maxPollMs`, and the wait ends at a
// deadline (the task goes on on the server) or when the pass's signal aborts. Long tasks are
// never waited for this way: a pass starts them and a later pass reads them (ADR 14).
import { setTimeout as delay } from 'node:timers/promises';
import { currentSignal } from '../../cancellation.js';

export interface PollOptions {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** First interval; it doubles up to `maxPollMs`. */
  readonly initialPollMs: number;
  readonly maxPollMs: number;
  /** Cuts a wait short. @default the pass's signal (cancellation.ts) */
  readonly signal?: AbortSignal;
}

/**
 * Reads until `ended` returns the outcome (it may throw for a task that failed); at the
 * deadline, throws what `late` makes of the last reading.
 */
export async function pollUntilEnded<Reading, Outcome>(
  read: () => Promise<Reading>,
  ended: (reading: Reading) => Outcome | undefined,
  late: (reading: Reading) => Error,
  options: PollOptions,
): Promise<Outcome> {
  const deadline = Date.now() + options.timeoutMs;
  let pollMs = options.initialPollMs;
  for (;;) {
    const reading = await read();
    const outcome = ended(reading);
    if (outcome !== undefined) return outcome;
    const left = deadline - Date.now();
    if (left <= 0) throw late(reading);
    const signal = options.signal ?? currentSignal();
    await delay(Math.min(pollMs, left), undefined, signal ? { signal } : {});
    pollMs = Math.min(pollMs * 2, options.maxPollMs);
  }
}
