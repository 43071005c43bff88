// A Provider's connection, read on every reconcile: the Secret and CA are read
// by name (never listed or watched), so a rotated credential takes effect at
// the next reconcile with no restart. Machine passes read through SharedReads:
// those of one second share one read.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { Reason } from '../../../infra/api/conditions.js';
import type { Connection } from '../../backends/backend.js';
import type { ObjectReader } from '../../runtime/shared-reads.js';
import { readData } from '../../runtime/object-data.js';

export type ConnectionResult =
  { readonly ok: true; readonly connection: Connection } | { readonly ok: false; readonly reason: Reason; readonly message: string };

export async function resolveConnection(api: ObjectReader, provider: Provider, credentialKeys: readonly string[]): Promise<ConnectionResult> {
  const ns = provider.metadata.namespace ?? '';
  const { connection } = provider.spec;
  let credentials: Record<string, string> = {};
  if (connection.credentialsRef) {
    const name = connection.credentialsRef.name;
    const data = await readData(api, 'Secret', ns, name);
    if (!data) return { ok: false, reason: Reason.SecretMissing, message: `Secret ${name} (spec.connection.credentialsRef) not found in namespace ${ns}` };
    const missing = credentialKeys.filter((k) => !data[k]);
    if (missing.length > 0)
      return { ok: false, reason: Reason.SecretInvalid, message: `Secret ${name} lacks key${missing.length > 1 ? 's' : ''} ${missing.join(', ')}` };
    credentials = data;
  }
  const ca = connection.caBundle;
  let caPem: string | undefined;
  if (ca?.inline) caPem = ca.inline;
  else if (ca?.configMapRef || ca?.secretRef) {
    const ref = (ca.configMapRef ?? ca.secretRef) as { name: string; key?: string };
    const kind = ca.configMapRef ? 'ConfigMap' : 'Secret';
    const key = ref.key ?? 'ca.crt';
    caPem = (await readData(api, kind, ns, ref.name))?.[key];
    if (!caPem) return { ok: false, reason: Reason.ConnectFailed, message: `${kind} ${ref.name} key ${key} (spec.connection.caBundle) not found` };
  }
  return {
    ok: true,
    connection: { endpoint: connection.endpoint, credentials, ...(caPem ? { caPem } : {}), insecureSkipTLSVerify: connection.insecureSkipTLSVerify ?? false },
  };
}
