// An InfraCluster's spec.controlPlaneEndpoint, once set, can be neither
// removed and then set anew nor moved, on every InfraCluster kind, whichever
// way the write comes: two updates, a merge patch, or a server-side apply by
// its own field manager dropping it or by another one forcing a new value. The
// real kube-apiserver judges (CEL transition rule on the spec,
// infra-cluster.ts).
import { PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiMessage, createNamespace, objectApi } from '../support/kube.js';

type Cluster = KubernetesObject & { spec: { controlPlaneEndpoint?: { host: string; port: number }; providerRefs?: { name: string }[] } };

const API_VERSION = 'infrastructure.banlieue.io/v1alpha1';
const KINDS = ['VSphereCluster', 'ProxmoxCluster', 'LibvirtCluster', 'CloudHypervisorCluster'] as const;
const FIRST = { host: '192.0.2.10', port: 6443 };
const SECOND = { host: '192.0.2.99', port: 6443 };
const IMMUTABLE = 'controlPlaneEndpoint is immutable once set';

describe('an InfraCluster control-plane endpoint, once set', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  const api = objectApi();

  const cluster = (kind: string, name: string, spec: Cluster['spec']): Cluster => ({
    apiVersion: API_VERSION,
    kind,
    metadata: { name, namespace: ns.name },
    spec,
  });

  /** The API server's refusal of `write`; fails the test when it accepted it. */
  async function refused(write: Promise<unknown>): Promise<string> {
    const outcome = await write.then(
      (accepted) => ({ accepted }),
      (err: unknown) => ({ err }),
    );
    if ('accepted' in outcome) throw new Error(`the API server accepted it: ${JSON.stringify(outcome.accepted)}`);
    return apiMessage(outcome.err);
  }

  const live = async (c: Cluster): Promise<Cluster> =>
    (await api.read({ apiVersion: c.apiVersion ?? '', kind: c.kind ?? '', metadata: { name: c.metadata?.name ?? '', namespace: ns.name } })) as Cluster;

  beforeAll(async () => {
    ns = await createNamespace('cp-endpoint');
  });
  afterAll(async () => {
    await ns.remove();
  });

  it.each(KINDS)('on a %s: refuses its removal, so it cannot be set anew, nor moved in one update', async (kind) => {
    const created = (await api.create(
      cluster(kind, `${kind.toLowerCase()}-updates`, { controlPlaneEndpoint: FIRST, providerRefs: [{ name: 'a' }] }),
    )) as Cluster;
    const removed = structuredClone(created);
    delete removed.spec.controlPlaneEndpoint;
    expect(await refused(api.replace(removed))).toContain(`spec.controlPlaneEndpoint: Invalid value`);
    // Had the removal gone through, the next update would set another one: refused as a move.
    const moved = structuredClone(created);
    moved.spec.controlPlaneEndpoint = SECOND;
    expect(await refused(api.replace(moved))).toContain(IMMUTABLE);
    expect((await live(created)).spec.controlPlaneEndpoint).toEqual(FIRST);
  });

  it.each(KINDS)('on a %s: refuses a merge patch deleting it', async (kind) => {
    const name = `${kind.toLowerCase()}-merge`;
    const created = (await api.create(cluster(kind, name, { controlPlaneEndpoint: FIRST }))) as Cluster;
    const patch = {
      apiVersion: API_VERSION,
      kind,
      metadata: { name, namespace: ns.name },
      spec: { controlPlaneEndpoint: null },
    };
    expect(await refused(api.patch(patch, undefined, undefined, undefined, undefined, PatchStrategy.MergePatch))).toContain(IMMUTABLE);
    expect((await live(created)).spec.controlPlaneEndpoint).toEqual(FIRST);
  });

  it.each(KINDS)('on a %s: refuses a server-side apply by its owner that drops it, and one by another field manager that forces another', async (kind) => {
    const name = `${kind.toLowerCase()}-apply`;
    const apply = (manager: string, spec: Cluster['spec'], force = false): Promise<unknown> =>
      api.patch(cluster(kind, name, spec), undefined, undefined, manager, force, PatchStrategy.ServerSideApply);
    await apply('capi-user', { controlPlaneEndpoint: FIRST, providerRefs: [{ name: 'a' }] });
    // The owner applies without the field: server-side apply removes what its manager no longer lists.
    expect(await refused(apply('capi-user', { providerRefs: [{ name: 'a' }] }))).toContain(IMMUTABLE);
    // Another manager takes the field over by force, with another value.
    expect(await refused(apply('someone-else', { controlPlaneEndpoint: SECOND }, true))).toContain(IMMUTABLE);
    expect((await live(cluster(kind, name, {}))).spec.controlPlaneEndpoint).toEqual(FIRST);
  });
});
