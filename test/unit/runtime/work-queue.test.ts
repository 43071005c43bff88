import { describe, expect, it } from 'vitest';
import { WorkQueue } from '../../../controller/runtime/work-queue.js';

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
