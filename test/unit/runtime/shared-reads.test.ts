import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiStatusError, type ObjectRef } from '../../../controller/runtime/kube-api.js';
import { SharedReads, type ObjectReader } from '../../../controller/runtime/shared-reads.js';

const secret = (name: string, namespace = 'team-a'): ObjectRef => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace } });

/** An API whose GETs answer when the test says, each with a fresh object naming the read it answers. */
class HeldApi implements ObjectReader {
  readonly asked: string[] = [];
  private readonly pending: { settle: (fail?: unknown) => void }[] = [];

  get<T>(ref: ObjectRef): Promise<T> {
    const n = this.asked.push(`${ref.metadata.namespace ?? ''}/${ref.metadata.name ?? ''}`);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ settle: (fail) => (fail === undefined ? resolve({ read: n } as T) : reject(fail)) });
    });
  }

  /** Answers every GET asked so far (or fails them with `fail`), then lets their callers run. */
  async answer(fail?: unknown): Promise<void> {
    for (const p of this.pending.splice(0)) p.settle(fail);
    await vi.advanceTimersByTimeAsync(0);
  }
}

describe('SharedReads', () => {
  let api: HeldApi;
  let reads: SharedReads;
  beforeEach(() => {
    vi.useFakeTimers();
    api = new HeldApi();
    reads = new SharedReads(api, 1_000);
  });
  afterEach(() => vi.useRealTimers());

  it('sends one GET for the passes that ask while it is in flight, and gives each its answer', async () => {
    const first = reads.get(secret('creds'));
    const second = reads.get(secret('creds'));
    await api.answer();
    expect(api.asked).toEqual(['team-a/creds']);
    expect(await first).toEqual({ read: 1 });
    expect(await second).toEqual({ read: 1 });
  });

  it('serves a pass within ttlMs of the answer from it, and reads afresh after', async () => {
    const first = reads.get(secret('creds'));
    await api.answer();
    await first;
    await vi.advanceTimersByTimeAsync(999);
    expect(await reads.get(secret('creds'))).toEqual({ read: 1 });
    await vi.advanceTimersByTimeAsync(1);
    const later = reads.get(secret('creds'));
    await api.answer();
    expect(await later).toEqual({ read: 2 });
    expect(api.asked).toHaveLength(2);
  });

  it('with ttlMs 0, joins a GET in flight and keeps no answer', async () => {
    const inFlightOnly = new SharedReads(api, 0);
    const first = inFlightOnly.get(secret('cluster'));
    const joined = inFlightOnly.get(secret('cluster'));
    await api.answer();
    expect([await first, await joined]).toEqual([{ read: 1 }, { read: 1 }]);
    const after = inFlightOnly.get(secret('cluster'));
    await api.answer();
    expect(await after).toEqual({ read: 2 });
  });

  it('keys by namespace and name: another object, or the same name in another namespace, is a GET of its own', async () => {
    const reads3 = [reads.get(secret('creds')), reads.get(secret('other')), reads.get(secret('creds', 'team-b'))];
    await api.answer();
    await Promise.all(reads3);
    expect(api.asked).toEqual(['team-a/creds', 'team-a/other', 'team-b/creds']);
  });

  it('shares a 404 like an answer', async () => {
    const first = reads.get(secret('gone'));
    await api.answer(new ApiStatusError(404, '', 'GET secret gone'));
    await expect(first).rejects.toMatchObject({ code: 404 });
    await expect(reads.get(secret('gone'))).rejects.toMatchObject({ code: 404 });
    expect(api.asked).toHaveLength(1);
  });

  it('keeps no other error: the next pass asks again', async () => {
    const first = reads.get(secret('creds'));
    await api.answer(new ApiStatusError(503, '', 'GET secret creds'));
    await expect(first).rejects.toMatchObject({ code: 503 });
    const next = reads.get(secret('creds'));
    await api.answer();
    expect(await next).toEqual({ read: 2 });
  });
});
