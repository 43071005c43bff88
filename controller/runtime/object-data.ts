// The data of one Secret or ConfigMap, read by name (never listed or watched:
// RBAC grants `get` only). Secret values come back decoded.
import { ApiStatusError } from './kube-api.js';
import type { ObjectReader } from './shared-reads.js';

/** The object's data as text, or undefined when it does not exist. */
export async function readData(api: ObjectReader, kind: 'Secret' | 'ConfigMap', namespace: string, name: string): Promise<Record<string, string> | undefined> {
  const data = await readBinaryData(api, kind, namespace, name);
  return data && Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('utf8')]));
}

/**
 * The object's data as bytes (a Secret's `data`, a ConfigMap's `data` and
 * `binaryData`), or undefined when it does not exist: for values that may not
 * be text (gzip user-data), which a UTF-8 decode would corrupt.
 */
export async function readBinaryData(
  api: ObjectReader,
  kind: 'Secret' | 'ConfigMap',
  namespace: string,
  name: string,
): Promise<Record<string, Buffer> | undefined> {
  try {
    const obj = await api.get<{ data?: Record<string, string>; binaryData?: Record<string, string> }>({
      apiVersion: 'v1',
      kind,
      metadata: { name, namespace },
    });
    const data = Object.entries(obj.data ?? {}).map(([k, v]): [string, Buffer] => [k, Buffer.from(v, kind === 'Secret' ? 'base64' : 'utf8')]);
    const binary = kind === 'ConfigMap' ? Object.entries(obj.binaryData ?? {}).map(([k, v]): [string, Buffer] => [k, Buffer.from(v, 'base64')]) : [];
    return Object.fromEntries([...data, ...binary]);
  } catch (err) {
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
}
