// Finalizers shared with other writers, against the real kube-apiserver: our
// copy of an object is often stale (an informer cache), and another writer
// (CAPI, GC, a user) may have changed the list since we read it. Adding or
// removing ours must never replace or drop theirs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureFinalizer, removeFinalizer } from '../../controller/runtime/finalizers.js';
import { ApiStatusError, KubeApi } from '../../controller/runtime/kube-api.js';
import { createNamespace, testKubeConfig } from '../support/kube.js';

const OURS = 'banlieue.io/test';
const THEIRS = 'other.example/f';

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; finalizers?: string[]; labels?: Record<string, string>; deletionTimestamp?: string };
  data?: Record<string, string>;
}

let ns: Awaited<ReturnType<typeof createNamespace>>;
let writes: number;
/** Our client; counts the writes it sends. */
const api = new KubeApi(testKubeConfig(), { onWrite: () => void (writes += 1) });
/** The other writer's client. */
const other = new KubeApi(testKubeConfig());

const pathOf = (name: string): string => `/api/v1/namespaces/${ns.name}/configmaps/${name}`;

async function createConfigMap(name: string, finalizers?: string[]): Promise<ConfigMap> {
  return other.request<ConfigMap>('POST', `/api/v1/namespaces/${ns.name}/configmaps`, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(finalizers ? { finalizers } : {}) } },
  });
}

const read = (name: string): Promise<ConfigMap> => other.request<ConfigMap>('GET', pathOf(name));

/** The other writer edits the list with its own JSON patch. */
async function otherPatches(name: string, patch: unknown[]): Promise<void> {
  await other.request('PATCH', pathOf(name), { body: patch, contentType: 'application/json-patch+json' });
}

beforeEach(async () => {
  ns = await createNamespace('finalizers');
  writes = 0;
});

afterEach(async () => {
  // Finalizers nobody will remove would keep the namespace terminating for ever.
  const list = await other.request<{ items: ConfigMap[] }>('GET', `/api/v1/namespaces/${ns.name}/configmaps`);
  for (const cm of list.items.filter((c) => c.metadata.finalizers?.length)) {
    await other.request('PATCH', pathOf(cm.metadata.name), { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
  }
  await ns.remove();
});

describe('Adding a finalizer beside another writer', () => {
  it('keeps theirs when they added the first finalizer after our read', async () => {
    const stale = await createConfigMap('first');
    await otherPatches('first', [{ op: 'add', path: '/metadata/finalizers', value: [THEIRS] }]);

    await expect(ensureFinalizer(api, stale, OURS)).resolves.toBe(true);

    expect((await read('first')).metadata.finalizers).toEqual([THEIRS, OURS]);
  });

  it('keeps theirs when they changed a list we had already read', async () => {
    const stale = await createConfigMap('list', ['a.example/f']);
    await otherPatches('list', [{ op: 'add', path: '/metadata/finalizers/-', value: THEIRS }]);

    await expect(ensureFinalizer(api, stale, OURS)).resolves.toBe(true);

    expect((await read('list')).metadata.finalizers).toEqual(['a.example/f', THEIRS, OURS]);
  });

  it('adds ours in one write when only another field changed since our read (an owner reference, a label)', async () => {
    const stale = await createConfigMap('elsewhere', ['a.example/f']);
    await otherPatches('elsewhere', [{ op: 'add', path: '/metadata/labels', value: { owner: 'capi' } }]);

    await expect(ensureFinalizer(api, stale, OURS)).resolves.toBe(true);

    const after = await read('elsewhere');
    expect(after.metadata.finalizers).toEqual(['a.example/f', OURS]);
    expect(writes).toBe(1);
  });

  it('writes nothing and says so when ours is already there', async () => {
    const fresh = await createConfigMap('present', [OURS]);

    await expect(ensureFinalizer(api, fresh, OURS)).resolves.toBe(false);

    expect(writes).toBe(0);
  });

  it('does not add ours twice when our copy predates our own earlier add', async () => {
    const stale = await createConfigMap('twice');
    await ensureFinalizer(api, await read('twice'), OURS);

    await expect(ensureFinalizer(api, stale, OURS)).resolves.toBe(false);

    expect((await read('twice')).metadata.finalizers).toEqual([OURS]);
  });

  it('fails at once, without retrying, when the server refuses the add itself (object being deleted)', async () => {
    await createConfigMap('deleting', [THEIRS]);
    await other.request('DELETE', pathOf('deleting'));
    const deleting = await read('deleting');
    expect(deleting.metadata.deletionTimestamp).toBeDefined();

    const failure = await ensureFinalizer(api, deleting, OURS).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(ApiStatusError);
    expect((failure as ApiStatusError).code).toBe(422);
    expect(writes).toBe(1);
  });
});

describe("A field stamped with the finalizer (an InfraMachine's providerID)", () => {
  const stamp = { path: ['data', 'providerID'] as const, value: 'vsphere://0f8b5a4e-7f3c-4d2e-9a61-3c2b1d0e9f87' };

  it('writes the field in the same patch as the finalizer: one write', async () => {
    const cm = await other.request<ConfigMap>('POST', `/api/v1/namespaces/${ns.name}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stamped' }, data: { other: 'x' } },
    });

    await expect(ensureFinalizer(api, cm, OURS, stamp)).resolves.toBe(true);

    const after = await read('stamped');
    expect(after.metadata.finalizers).toEqual([OURS]);
    expect(after.data).toEqual({ other: 'x', providerID: stamp.value });
    expect(writes).toBe(1);
  });

  it('keeps a value another writer set after our read', async () => {
    const stale = await other.request<ConfigMap>('POST', `/api/v1/namespaces/${ns.name}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'theirs' }, data: { other: 'x' } },
    });
    await otherPatches('theirs', [{ op: 'add', path: '/data/providerID', value: 'vsphere://theirs' }]);

    await expect(ensureFinalizer(api, stale, OURS, stamp)).resolves.toBe(true);

    const after = await read('theirs');
    expect(after.metadata.finalizers).toEqual([OURS]);
    expect(after.data?.providerID).toBe('vsphere://theirs');
  });
});

describe('Removing a finalizer beside another writer', () => {
  it('keeps theirs when they inserted one before ours after our read', async () => {
    const stale = await createConfigMap('inserted', [OURS]);
    await otherPatches('inserted', [{ op: 'add', path: '/metadata/finalizers/0', value: THEIRS }]);

    await removeFinalizer(api, stale, OURS);

    expect((await read('inserted')).metadata.finalizers).toEqual([THEIRS]);
  });

  it('keeps theirs when a finalizer before ours went away after our read', async () => {
    const stale = await createConfigMap('shifted', ['a.example/f', OURS, THEIRS]);
    await otherPatches('shifted', [
      { op: 'test', path: '/metadata/finalizers/0', value: 'a.example/f' },
      { op: 'remove', path: '/metadata/finalizers/0' },
    ]);

    await removeFinalizer(api, stale, OURS);

    expect((await read('shifted')).metadata.finalizers).toEqual([THEIRS]);
  });

  it('is done when the object is already gone', async () => {
    const stale = await createConfigMap('gone', [OURS]);
    await otherPatches('gone', [{ op: 'remove', path: '/metadata/finalizers' }]);
    await other.request('DELETE', pathOf('gone'));

    await expect(removeFinalizer(api, stale, OURS)).resolves.toBeUndefined();
  });
});
