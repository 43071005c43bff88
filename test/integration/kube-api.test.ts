// The one Kubernetes client against the real kube-apiserver: request bodies
// reach the server whatever the method. A DELETE's body (its preconditions)
// was once sent without a length, so the server never read it and took it
// for the start of the next request on the kept-alive socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiStatusError, KubeApi } from '../../controller/runtime/kube-api.js';
import { createNamespace, testKubeConfig } from '../support/kube.js';

interface ConfigMap {
  metadata: { name: string; uid?: string; deletionTimestamp?: string };
  data?: Record<string, string>;
}

let ns: Awaited<ReturnType<typeof createNamespace>>;
const api = new KubeApi(testKubeConfig());
const collection = (): string => `/api/v1/namespaces/${ns.name}/configmaps`;

async function create(name: string): Promise<ConfigMap> {
  return api.request<ConfigMap>('POST', collection(), { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } } });
}

beforeAll(async () => {
  ns = await createNamespace('kube-api');
});

afterAll(async () => {
  await ns.remove();
});

describe('KubeApi request bodies', () => {
  it('sends a DELETE its preconditions: a uid that is not the object’s is refused and the object stays', async () => {
    await create('kept');
    const refused = await api
      .request('DELETE', `${collection()}/kept`, {
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: '00000000-0000-0000-0000-000000000000' } },
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(ApiStatusError);
    expect((refused as ApiStatusError).code).toBe(409);
    expect((await api.request<ConfigMap>('GET', `${collection()}/kept`)).metadata.name).toBe('kept');
  });

  it('keeps the kept-alive connection usable after DELETEs with bodies: every following write succeeds', async () => {
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => create(`cm-${i}`)));
    const results = await Promise.allSettled(
      made.flatMap((cm, i) => [
        api.request('DELETE', `${collection()}/${cm.metadata.name}`, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: cm.metadata.uid } },
        }),
        api.request('PATCH', `${collection()}/kept`, { body: { data: { [`k${i}`]: String(i) } }, contentType: 'application/merge-patch+json' }),
      ]),
    );
    const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(failures).toEqual([]);
    const left = await api.request<{ items: ConfigMap[] }>('GET', collection());
    expect(left.items.map((c) => c.metadata.name)).toEqual(['kept']);
    expect(Object.keys(left.items[0]?.data ?? {}).sort()).toEqual(['a', 'k0', 'k1', 'k2', 'k3', 'k4', 'k5']);
  });
});
