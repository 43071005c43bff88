// What a namespace still holds besides the install: `banlieue uninstall` deletes the
// install's Namespace only when nothing else is in it (deleting a namespace deletes
// everything inside, a user's Secrets and VirtualMachines included).
import { toApiFailure } from '../runtime/api-error.js';
import type { KubeApi } from '../runtime/kube-api.js';

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface Listed {
  metadata: { name: string; ownerReferences?: unknown[]; deletionTimestamp?: string };
}

/** Objects every namespace has, or that the install's own roles make there. */
function isNamespaceFurniture(kind: string, name: string): boolean {
  if (kind === 'ConfigMap' && name === 'kube-root-ca.crt') return true;
  if (kind === 'ServiceAccount' && name === 'default') return true;
  // The roles' leader-election Leases (banlieue-controller, banlieue-provider-<backend>...).
  return kind === 'Lease' && name.startsWith('banlieue-');
}

/** Every namespaced kind that can be listed, with its REST path prefix, by discovery. */
async function listableKinds(api: KubeApi): Promise<{ path: string; kind: string; group: string }[]> {
  const groups = await api.request<{ groups: { name: string; preferredVersion: { groupVersion: string } }[] }>('GET', '/apis');
  const versions = [{ group: '', base: '/api/v1' }, ...groups.groups.map((g) => ({ group: g.name, base: `/apis/${g.preferredVersion.groupVersion}` }))];
  const found: { path: string; kind: string; group: string }[] = [];
  for (const { group, base } of versions) {
    const resources = await api.request<{ resources: ApiResource[] }>('GET', base).then(
      (list) => list.resources,
      (err: unknown) => {
        // A group version gone since /apis answered (a CRD just deleted, with --crds) serves nothing.
        if (toApiFailure(err).status === 404) return [];
        throw err;
      },
    );
    for (const r of resources) {
      // Events record what happened; they are not anyone's data.
      if (!r.namespaced || r.name.includes('/') || !r.verbs.includes('list') || r.kind === 'Event') continue;
      found.push({ path: `${base}/namespaces/{ns}/${r.name}`, kind: r.kind, group });
    }
  }
  return found;
}

/**
 * The items of a list, asked again while the API server answers 429: a kind whose CRD was just
 * established is refused so until its storage has filled (seconds). None for a kind not served.
 */
export async function listSoon<T>(api: KubeApi, path: string): Promise<T[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await api.request<{ items: T[] }>('GET', path)).items;
    } catch (err) {
      // A kind gone since discovery (a CRD just deleted, with --crds) holds nothing.
      if (toApiFailure(err).kind === 'NotFound') return [];
      if (toApiFailure(err).status !== 429 || attempt >= 60) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/**
 * What `ns` holds that is neither the install's (`ours`: `<group>/<Kind>/<name>`), nor every
 * namespace's furniture, nor owned by another object (it goes with its owner, which is counted),
 * nor already being deleted: `Kind name` each. A kind that cannot be listed counts as a leftover.
 */
export async function namespaceLeftovers(api: KubeApi, ns: string, ours: ReadonlySet<string>): Promise<string[]> {
  const leftovers: string[] = [];
  for (const { path, kind, group } of await listableKinds(api)) {
    let items: Listed[];
    try {
      items = await listSoon<Listed>(api, path.replace('{ns}', ns));
    } catch (err) {
      leftovers.push(`${kind} (could not list: ${err instanceof Error ? err.message : String(err)})`);
      continue;
    }
    for (const item of items) {
      const name = item.metadata.name;
      if (ours.has(`${group}/${kind}/${name}`) || isNamespaceFurniture(kind, name)) continue;
      if ((item.metadata.ownerReferences?.length ?? 0) > 0 || item.metadata.deletionTimestamp) continue;
      leftovers.push(`${kind} ${name}`);
    }
  }
  return leftovers;
}
