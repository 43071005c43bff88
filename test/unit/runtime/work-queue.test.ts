import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue, type WorkQueueHooks } from '../../../controller/runtime/work-queue.js';

/** A worker whose calls the test releases one by one. */
function gatedWorker(): { calls: string[]; release: () => void; worker: (key: string) => Promise<void> } {
  const calls: string[] = [];
  const gates: (() => void)[] = [];
  return {
    calls,
    release: () => gates.shift()?.(),
    worker: (key) => {
      calls.push(key);
      return new Promise<void>((resolve) => gates.push(resolve));
    },
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('WorkQueue', () => {
  it('made held, takes keys but runs none until start(): a role starts its workers once its caches have synced', async () => {
    const g = gatedWorker();
    const q = new WorkQueue(g.worker, { concurrency: 2, held: true });
    ['a', 'b', 'a'].forEach((k) => q.add(k));
    await tick();
    expect(g.calls).toEqual([]);
    expect(q.length).toBe(2);
    q.start();
    await tick();
    expect(g.calls).toEqual(['a', 'b']);
    g.release();
    g.release();
    await q.idle();
  });

  it('processes a key queued several times once', async () => {
    const g = gatedWorker();
    const q = new WorkQueue(g.worker, { concurrency: 1 });
    q.add('busy');
    ['a', 'a', 'b', 'a'].forEach((k) => q.add(k));
    for (let i = 0; i < 3; i++) {
      await tick();
      g.release();
    }
    await q.idle();
    expect(g.calls).toEqual(['busy', 'a', 'b']);
  });

  it('never runs one key on two workers; a key added while running runs again after', async () => {
    const g = gatedWorker();
    const q = new WorkQueue(g.worker, { concurrency: 4 });
    q.add('a');
    await tick();
    q.add('a');
    await tick();
    expect(g.calls).toEqual(['a']);
    g.release();
    await tick();
    expect(g.calls).toEqual(['a', 'a']);
    g.release();
    await q.idle();
  });

  it("takes a new object's key before keys already waiting, in the order new keys came", async () => {
    const g = gatedWorker();
    const q = new WorkQueue(g.worker, { concurrency: 1 });
    q.add('busy');
    q.add('update-1');
    q.add('update-2');
    q.add('new-1', { new: true });
    q.add('new-2', { new: true });
    // Already waiting: adding it as new neither moves it nor queues it twice.
    q.add('update-1', { new: true });
    expect(q.length).toBe(4);
    for (let i = 0; i < 5; i++) {
      await tick();
      g.release();
    }
    await q.idle();
    expect(g.calls).toEqual(['busy', 'new-1', 'new-2', 'update-1', 'update-2']);
  });

  it('runs different keys concurrently up to the limit', async () => {
    const g = gatedWorker();
    const q = new WorkQueue(g.worker, { concurrency: 2 });
    ['a', 'b', 'c'].forEach((k) => q.add(k));
    await tick();
    expect(g.calls).toEqual(['a', 'b']);
    g.release();
    await tick();
    expect(g.calls).toEqual(['a', 'b', 'c']);
    g.release();
    g.release();
    await q.idle();
  });

  it('retries a failing key with backoff and reports each failure', async () => {
    let attempts = 0;
    const failures: number[] = [];
    const q = new WorkQueue(
      async () => {
        attempts += 1;
        if (attempts < 3) throw new Error('boom');
      },
      { retryInitialMs: 1, retryMaxMs: 5 },
      (_k, _e, retryInMs) => failures.push(retryInMs),
    );
    q.add('a');
    while (attempts < 3) await new Promise((r) => setTimeout(r, 5));
    await q.idle();
    expect(attempts).toBe(3);
    expect(failures).toHaveLength(2);
    failures.forEach((ms) => expect(ms).toBeLessThanOrEqual(5));
  });

  it('keeps the earliest deadline of delayed adds', async () => {
    const calls: string[] = [];
    const q = new WorkQueue(async (k) => void calls.push(k));
    q.addAfter('a', 60_000);
    q.addAfter('a', 1);
    while (calls.length === 0) await new Promise((r) => setTimeout(r, 2));
    expect(calls).toEqual(['a']);
    await q.shutDown();
  });
});

/** A clock the test moves by hand. */
function manualClock(): { now: () => Date; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => new Date(t), advance: (ms) => void (t += ms) };
}

/** Hooks that record what the queue told them. */
function recordingHooks(): { seen: { added: number; depth: number[]; waited: number[]; worked: number[]; retried: number }; hooks: WorkQueueHooks } {
  const seen = { added: 0, depth: [] as number[], waited: [] as number[], worked: [] as number[], retried: 0 };
  return {
    seen,
    hooks: {
      added: () => void (seen.added += 1),
      depth: (n) => void seen.depth.push(n),
      started: (ms) => void seen.waited.push(ms),
      finished: (ms) => void seen.worked.push(ms),
      retried: () => void (seen.retried += 1),
    },
  };
}

describe('WorkQueue hooks', () => {
  it('counts an add once per key waiting, and reports depth as keys wait and leave', async () => {
    const g = gatedWorker();
    const { seen, hooks } = recordingHooks();
    const q = new WorkQueue(g.worker, { concurrency: 1, hooks });
    q.add('a');
    ['b', 'b', 'c'].forEach((k) => q.add(k));
    expect(seen.added).toBe(3);
    expect(seen.depth.at(-1)).toBe(2);
    for (let i = 0; i < 3; i++) {
      await tick();
      g.release();
    }
    await q.idle();
    expect(seen.depth.at(-1)).toBe(0);
  });

  it('counts a key added while it runs as waiting until its rerun starts', async () => {
    const g = gatedWorker();
    const { seen, hooks } = recordingHooks();
    const q = new WorkQueue(g.worker, { hooks });
    q.add('a');
    await tick();
    q.add('a');
    q.add('a');
    expect(seen.added).toBe(2);
    expect(seen.depth.at(-1)).toBe(1);
    g.release();
    await tick();
    expect(g.calls).toEqual(['a', 'a']);
    expect(seen.depth.at(-1)).toBe(0);
    g.release();
    await q.idle();
  });

  it('reports how long a key waited and how long its work took', async () => {
    const g = gatedWorker();
    const clock = manualClock();
    const { seen, hooks } = recordingHooks();
    const q = new WorkQueue(g.worker, { concurrency: 1, hooks, clock });
    q.add('a');
    q.add('b');
    clock.advance(250);
    await tick();
    g.release();
    await tick();
    clock.advance(40);
    g.release();
    await q.idle();
    expect(seen.waited).toEqual([0, 250]);
    expect(seen.worked).toEqual([250, 40]);
  });

  it('tells in-flight work apart by how long it has run', async () => {
    const g = gatedWorker();
    const clock = manualClock();
    const q = new WorkQueue(g.worker, { clock });
    q.add('a');
    clock.advance(100);
    q.add('b');
    clock.advance(20);
    expect(q.inFlightMs()).toEqual([120, 20]);
    g.release();
    g.release();
    await q.idle();
    expect(q.inFlightMs()).toEqual([]);
  });

  it('counts a retry for each failure, not for a requested requeue', async () => {
    let attempts = 0;
    const { seen, hooks } = recordingHooks();
    const q = new WorkQueue(
      async () => {
        attempts += 1;
        if (attempts < 3) throw new Error('boom');
        return { requeueAfterMs: 60_000 };
      },
      { retryInitialMs: 1, retryMaxMs: 2, hooks },
    );
    q.add('a');
    while (attempts < 3) await new Promise((r) => setTimeout(r, 2));
    await q.idle();
    expect(seen.retried).toBe(2);
    await q.shutDown();
  });
});

describe('WorkQueue shutdown', () => {
  it('aborts the signal of in-flight work and waits for it to settle', async () => {
    const signals: AbortSignal[] = [];
    let settled = 0;
    const q = new WorkQueue(async (_key, signal) => {
      signals.push(signal);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      settled += 1;
    });
    ['a', 'b'].forEach((k) => q.add(k));
    await tick();
    expect(signals.map((s) => s.aborted)).toEqual([false, false]);
    await q.shutDown();
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
    expect(settled).toBe(2);
  });

  it('neither reports nor retries work that rejects because it was aborted', async () => {
    const failures: string[] = [];
    const { seen, hooks } = recordingHooks();
    let calls = 0;
    const q = new WorkQueue(
      (_key, signal) => {
        calls += 1;
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      },
      { retryInitialMs: 1, hooks },
      (key) => failures.push(key),
    );
    q.add('a');
    await tick();
    await q.shutDown();
    expect(failures).toEqual([]);
    expect(seen.retried).toBe(0);
    q.add('a');
    await tick();
    expect(calls).toBe(1);
  });

  it('drops keys that were waiting, including one added while it ran', async () => {
    const g = gatedWorker();
    const { seen, hooks } = recordingHooks();
    const q = new WorkQueue(g.worker, { concurrency: 1, hooks });
    q.add('a');
    await tick();
    q.add('a');
    q.add('b');
    const stopped = q.shutDown();
    expect(seen.depth.at(-1)).toBe(0);
    g.release();
    await stopped;
    await tick();
    expect(g.calls).toEqual(['a']);
  });
});

describe('WorkQueue backoff across requeues', () => {
  /** A worker that counts its passes over each key and ends each as `outcome` says. */
  function countingWorker(outcome: (key: string) => 'fail' | 'blocked' | 'ok') {
    const passes: Record<string, number> = {};
    return {
      passes,
      worker: async (key: string) => {
        passes[key] = (passes[key] ?? 0) + 1;
        const how = outcome(key);
        if (how === 'fail') throw new Error('refused');
        return how === 'blocked' ? { blockedRetryMs: 10_000 } : {};
      },
    };
  }
  /** Lets queued passes run (they await nothing but the fake clock). */
  const settle = (): Promise<void> => vi.advanceTimersByTimeAsync(0).then(() => undefined);

  beforeEach(() => {
    vi.useFakeTimers();
    // No jitter: each backoff delay is its ceiling.
    vi.spyOn(Math, 'random').mockReturnValue(1);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('keeps a failing key to its backoff deadline when other objects’ events add it', async () => {
    const w = countingWorker(() => 'fail');
    const q = new WorkQueue(w.worker, { retryInitialMs: 1000 });
    q.add('vm-a');
    await settle();
    expect(w.passes['vm-a']).toBe(1);
    // A sibling's events and a resync, 65 of them before the deadline.
    for (let i = 0; i < 65; i++) q.add('vm-a');
    await vi.advanceTimersByTimeAsync(999);
    expect(w.passes['vm-a']).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.passes['vm-a']).toBe(2);
    // The next deadline is twice as far, and holds as well.
    q.add('vm-a');
    await vi.advanceTimersByTimeAsync(1999);
    expect(w.passes['vm-a']).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.passes['vm-a']).toBe(3);
    await q.shutDown();
  });

  it('runs a failing key at once when its own object changes: the change may be the fix', async () => {
    let fixed = false;
    const w = countingWorker(() => (fixed ? 'ok' : 'fail'));
    const q = new WorkQueue(w.worker, { retryInitialMs: 60_000 });
    q.add('vm-a');
    await settle();
    fixed = true;
    q.add('vm-a', { changed: true });
    await settle();
    expect(w.passes['vm-a']).toBe(2);
    // Succeeded: its backoff is over, and any add runs it again.
    q.add('vm-a');
    await settle();
    expect(w.passes['vm-a']).toBe(3);
    await q.shutDown();
  });

  it('after a failure, keeps to the backoff a key another object’s event added while it ran, but not one its own change added', async () => {
    const gates: (() => void)[] = [];
    let passes = 0;
    const q = new WorkQueue(
      () => {
        passes += 1;
        return new Promise<void>((_resolve, reject) => gates.push(() => reject(new Error('refused'))));
      },
      { retryInitialMs: 1000 },
    );
    q.add('vm-a');
    await settle();
    q.add('vm-a');
    gates.shift()?.();
    await settle();
    expect(passes).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(passes).toBe(2);
    q.add('vm-a', { changed: true });
    gates.shift()?.();
    await settle();
    expect(passes).toBe(3);
    gates.shift()?.();
    await q.shutDown();
  });

  it('backs blocked work off from its first delay, doubling up to retryMaxMs, holding against other events', async () => {
    const w = countingWorker(() => 'blocked');
    const q = new WorkQueue(w.worker, { retryMaxMs: 60_000 });
    q.add('machine');
    await settle();
    const passTimes: number[] = [];
    for (let elapsed = 0; elapsed < 200_000; elapsed += 1000) {
      const before = w.passes.machine;
      q.add('machine');
      await vi.advanceTimersByTimeAsync(1000);
      if (w.passes.machine !== before) passTimes.push(elapsed + 1000);
    }
    const gaps = passTimes.map((t, i) => t - (passTimes[i - 1] ?? 0));
    expect(gaps).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
    await q.shutDown();
  });

  it('keeps backing off work that is blocked again after waiting on what it started: a refused clone is not restarted at the first delay', async () => {
    // A clone is started (wait for the task), the task fails (blocked), the clone is started again, and so on.
    let pass = 0;
    const passTimes: number[] = [];
    const q = new WorkQueue(
      async () => {
        passTimes.push(Date.now());
        pass += 1;
        return pass % 2 === 1 ? { requeueAfterMs: 1000, inProgress: true } : { blockedRetryMs: 10_000 };
      },
      { retryMaxMs: 300_000 },
    );
    q.add('machine');
    await settle();
    for (let elapsed = 0; elapsed < 200_000; elapsed += 1000) await vi.advanceTimersByTimeAsync(1000);
    const clones = passTimes.filter((_, i) => i % 2 === 0);
    const gaps = clones.slice(1).map((t, i) => t - (clones[i] ?? 0));
    // Each clone waits twice as long as the one before (plus the second the task took), not 10 s every time.
    expect(gaps).toEqual([11_000, 21_000, 41_000, 81_000]);
    await q.shutDown();
  });

  it('starts its backoff afresh once its own object changes: a fixed spec is tried at the first delay', async () => {
    const w = countingWorker(() => 'blocked');
    const q = new WorkQueue(w.worker, { retryMaxMs: 300_000 });
    q.add('machine');
    await settle();
    await vi.advanceTimersByTimeAsync(10_000 + 20_000);
    expect(w.passes.machine).toBe(3);
    q.add('machine', { changed: true });
    await settle();
    expect(w.passes.machine).toBe(4);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.passes.machine).toBe(5);
    await q.shutDown();
  });

  it('still cuts a requested requeue short on any add: waiting is not failing', async () => {
    const passes: number[] = [];
    const q = new WorkQueue(async () => {
      passes.push(passes.length);
      return { requeueAfterMs: 60_000 };
    });
    q.add('vm-a');
    await settle();
    q.add('vm-a');
    await settle();
    expect(passes).toHaveLength(2);
    await q.shutDown();
  });
});
