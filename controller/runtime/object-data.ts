// The data of one Secret or ConfigMap, read by name (never listed or watched:
// RBAC grants `get` only). Secret values come back decoded.
import { ApiStatusError, type KubeApi } from './kube-api.js';

/** The object's data, or undefined when it does not exist. */
export async function readData(api: KubeApi, kind: 'Secret' | 'ConfigMap', namespace: string, name: string): Promise<Record<string, string> | undefined> {
  try {
    const obj = await api.get<{ data?: Record<string, string> }>({ apiVersion: 'v1', kind, metadata: { name, namespace } });
    const data = obj.data ?? {};
    return kind === 'Secret' ? Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])) : data;
  } catch (err) {
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
}
