// Events are queued and sent in the background, a few at a time: a reconcile
// never waits on them unless it awaits record(); a write the API server could
// not take is tried again, a refused one is logged only.
import { describe, expect, it, vi } from 'vitest';
import { EventRecorder } from '../../../controller/runtime/events.js';
import { ApiStatusError, type KubeApi } from '../../../controller/runtime/kube-api.js';
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

  it('tries again an Event the API server could not take (unreachable, 429, 5xx), and gives up on one it refused', async () => {
    const { api, posts } = heldApi();
    const recorder = new EventRecorder(api, 'banlieue-controller', 'test', silentLogger(), [0, 0]);
    const deleted = recorder.record(vm('a'), 'Normal', 'Deleted', 'Deleted the VM');
    await flush();
    posts[0]?.answer(Object.assign(new Error('POST events: socket hang up'), { code: 'ECONNRESET' }));
    await vi.waitFor(() => expect(posts).toHaveLength(2));
    posts[1]?.answer(new ApiStatusError(503, '{"message":"etcdserver: leader changed"}', 'POST events'));
    await vi.waitFor(() => expect(posts).toHaveLength(3));
    posts[2]?.answer();
    await deleted;
    expect(posts.map((p) => p.body.note)).toEqual(['Deleted the VM', 'Deleted the VM', 'Deleted the VM']);

    const refused = recorder.record(vm('b'), 'Normal', 'Deleted', 'Deleted the VM');
    await vi.waitFor(() => expect(posts).toHaveLength(4));
    posts[3]?.answer(new ApiStatusError(422, '{"message":"Event is invalid"}', 'POST events'));
    await refused;
    expect(posts).toHaveLength(4);
  });
});
