// The informer's wait for its first list, without a server: run() is never
// called, so the cache never syncs and only the timeout can end the wait.
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Informer, NAMESPACE_INDEX, type KubeObject } from '../../../controller/runtime/informer.js';
import { KubeApi } from '../../../controller/runtime/kube-api.js';
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
