// The informer's wait for its first list, without a server: run() is never
// called, so the cache never syncs and only the timeout can end the wait. Then,
// against a scripted API server, what it does when a kind stops being served.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Informer, NAMESPACE_INDEX, type KubeObject } from '../../../controller/runtime/informer.js';
import { ApiStatusError, KubeApi } from '../../../controller/runtime/kube-api.js';
import { silentLogger } from '../../../controller/runtime/log.js';

function unsyncedInformer(extra: { syncTimeoutMs?: number; namespace?: string } = {}): Informer<KubeObject> {
  return new Informer(new KubeApi(new KubeConfig()), {
    apiVersion: 'infrastructure.banlieue.io/v1alpha1',
    kind: 'VSphereMachine',
    log: silentLogger(),
    ...extra,
  });
}

describe('Informer waitForSync', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('rejects after 120 s by default, naming the kind and apiVersion', async () => {
    const wait = unsyncedInformer().waitForSync();
    const outcome = expect(wait).rejects.toThrow(
      'cache of VSphereMachine (infrastructure.banlieue.io/v1alpha1) did not sync within 120s: the list has not answered',
    );
    await vi.advanceTimersByTimeAsync(119_999);
    await vi.advanceTimersByTimeAsync(1);
    await outcome;
  });

  it('takes its timeout from the call first, then from the informer options', async () => {
    const informer = unsyncedInformer({ syncTimeoutMs: 30_000, namespace: 'team-a' });
    const byOption = expect(informer.waitForSync()).rejects.toThrow(
      'cache of VSphereMachine (infrastructure.banlieue.io/v1alpha1) in namespace team-a did not sync within 30s',
    );
    const byCall = expect(informer.waitForSync({ timeoutMs: 5_000 })).rejects.toThrow('did not sync within 5s');
    await vi.advanceTimersByTimeAsync(30_000);
    await Promise.all([byOption, byCall]);
  });

  it('waits for ever when the timeout is Infinity', async () => {
    let settled = false;
    void unsyncedInformer()
      .waitForSync({ timeoutMs: Infinity })
      .finally(() => (settled = true));
    await vi.advanceTimersByTimeAsync(24 * 3600_000);
    expect(settled).toBe(false);
  });

  it('resolves the waiters when run() stops before the first list', async () => {
    const informer = unsyncedInformer();
    const wait = informer.waitForSync();
    await informer.run(AbortSignal.abort());
    await expect(wait).resolves.toBeUndefined();
  });
});

describe('Informer indexes', () => {
  it('has a namespace index from the start and refuses to add it twice', () => {
    const informer = unsyncedInformer();
    expect(informer.byIndex(NAMESPACE_INDEX, 'team-a')).toEqual([]);
    expect(informer.list('team-a')).toEqual([]);
    expect(() => informer.addIndex(NAMESPACE_INDEX, () => [])).toThrow('already exists');
  });
});

describe('Informer of a kind the API server stops serving', () => {
  type Thing = KubeObject & { metadata: { name: string; namespace: string; uid: string; resourceVersion: string } };
  const thing = (name: string): Thing => ({ metadata: { name, namespace: 'team-a', uid: `uid-${name}`, resourceVersion: '1' } });
  const notServed = (): ApiStatusError => new ApiStatusError(404, '{"message":"404 page not found"}', 'GET /apis/infrastructure.banlieue.io/v1alpha1');

  /** An API server answering each list with the next of `lists` (404 when none is left) and each watch with the next of `watches` (then one open until the end). */
  function fakeApi(lists: (Thing[] | 'notServed')[], watches: 'notServed'[]): KubeApi {
    const api = {
      pathOf: async () => '/apis/infrastructure.banlieue.io/v1alpha1/namespaces/team-a/vspheremachines',
      request: async () => {
        const next = lists.shift() ?? 'notServed';
        if (next === 'notServed') throw notServed();
        return { items: next, metadata: { resourceVersion: '1' } };
      },
      watch: (_path: string, _query: unknown, _onEvent: unknown, signal: AbortSignal) => {
        if (watches.shift() === 'notServed') return Promise.reject(notServed());
        return new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      },
    };
    return api as unknown as KubeApi;
  }

  /** Runs `informer` until it emitted `count` events, or for 20 s at most; the events as `<event> <name>`. */
  async function eventsUntil(informer: Informer<Thing>, count: number): Promise<string[]> {
    const seen: string[] = [];
    const stop = new AbortController();
    const deadline = setTimeout(() => stop.abort(), 20_000);
    for (const event of ['add', 'update', 'delete'] as const) {
      informer.on(event, (obj) => {
        seen.push(`${event} ${obj.metadata.name}`);
        if (seen.length === count) stop.abort();
      });
    }
    await informer.run(stop.signal);
    clearTimeout(deadline);
    return seen;
  }

  const informerOn = (api: KubeApi): Informer<Thing> =>
    new Informer<Thing>(api, { apiVersion: 'infrastructure.banlieue.io/v1alpha1', kind: 'VSphereMachine', namespace: 'team-a', log: silentLogger() });

  it('empties its cache once listed, with a delete for each object its watch did not see go, and fills it again when the kind is back', async () => {
    // Listed a and b; the watch then answers 404 (the CRD is gone), and so does the list; then the CRD is back with c.
    const informer = informerOn(fakeApi([[thing('a'), thing('b')], 'notServed', [thing('c')]], ['notServed']));
    expect(await eventsUntil(informer, 5)).toEqual(['add a', 'add b', 'delete a', 'delete b', 'add c']);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.list().map((o) => o.metadata.name)).toEqual(['c']);
  });

  it('takes a kind not served at its first list for no answer, not for an empty one: it does not sync, and says why', async () => {
    const informer = informerOn(fakeApi(['notServed'], []));
    const stop = new AbortController();
    const running = informer.run(stop.signal);
    await expect(informer.waitForSync({ timeoutMs: 200 })).rejects.toThrow('did not sync within 0.2s: GET /apis/infrastructure.banlieue.io/v1alpha1: HTTP 404');
    expect(informer.hasSynced()).toBe(false);
    stop.abort();
    await running;
  });
});
