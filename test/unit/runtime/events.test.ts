// Events are queued and sent in the background, a few at a time: a reconcile
// never waits on them unless it awaits record(); failures are logged only.
import { describe, expect, it } from 'vitest';
import { EventRecorder } from '../../../controller/runtime/events.js';
import type { KubeApi } from '../../../controller/runtime/kube-api.js';
import { silentLogger } from '../../../controller/runtime/log.js';

interface Post {
  readonly path: string;
  readonly body: { reason: string; note: string; regarding: { name: string } };
  readonly answer: (error?: Error) => void;
}

/** An API whose POSTs wait until the test answers them. */
function heldApi(): { api: KubeApi; posts: Post[] } {
  const posts: Post[] = [];
  const api = {
    request: (_method: string, path: string, opts: { body: Post['body'] }) =>
      new Promise<void>((resolve, reject) => posts.push({ path, body: opts.body, answer: (error) => (error ? reject(error) : resolve()) })),
  } as unknown as KubeApi;
  return { api, posts };
}

const vm = (name: string) => ({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VirtualMachine', metadata: { name, namespace: 'team-a', uid: `uid-${name}` } });
const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('EventRecorder', () => {
  it('sends in the background, four at a time, and settles each record() once its event is sent', async () => {
    const { api, posts } = heldApi();
    const recorder = new EventRecorder(api, 'banlieue-controller', 'test', silentLogger());
    let settled = 0;
    const records = Array.from({ length: 6 }, (_, i) => recorder.record(vm(`vm-${i}`), 'Normal', 'Created', 'made').then(() => void (settled += 1)));
    await flush();
    expect(posts.map((p) => p.body.regarding.name)).toEqual(['vm-0', 'vm-1', 'vm-2', 'vm-3']);
    expect(posts[0]?.path).toBe('/apis/events.k8s.io/v1/namespaces/team-a/events');
    expect(settled).toBe(0);
    posts[0]?.answer();
    await flush();
    expect(settled).toBe(1);
    expect(posts).toHaveLength(5);
    for (const post of posts.slice(1)) post.answer(new Error('etcd is busy'));
    await flush();
    posts[5]?.answer();
    await Promise.all(records);
    expect(settled).toBe(6);
  });

  it('records the same (object, reason, note) once per window', async () => {
    const { api, posts } = heldApi();
    const recorder = new EventRecorder(api, 'banlieue-controller', 'test', silentLogger());
    void recorder.record(vm('a'), 'Warning', 'ConnectFailed', 'refused');
    await recorder.record(vm('a'), 'Warning', 'ConnectFailed', 'refused');
    void recorder.record(vm('a'), 'Warning', 'ConnectFailed', 'timed out');
    await flush();
    expect(posts.map((p) => p.body.note)).toEqual(['refused', 'timed out']);
  });
});
