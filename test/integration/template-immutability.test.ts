// Template immutability through the real API server, as the install enforces
// it (the policy ships with the CRDs, which the suite's setup applied from
// dist/): a template's spec cannot change, its metadata can, and CAPI's
// topology dry run (a dry-run server-side apply carrying the
// topology.cluster.x-k8s.io/dry-run annotation) is let through, so a changed
// ClusterClass can tell whether a template changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { Annotation } from '../../infra/api/well-known.js';
import { apiMessage, createNamespace, testKubeConfig } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { template: { spec: Record<string, unknown> } };
}

const TEMPLATES = {
  VSphereMachineTemplate: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048 },
  VSphereClusterTemplate: { providerRefs: [{ name: 'vcenter-a' }] },
} as const;

/** The API server's refusal, or undefined when admitted. */
const refusal = (attempt: Promise<unknown>): Promise<string | undefined> =>
  attempt.then(
    () => undefined,
    (err: unknown) => apiMessage(err),
  );

describe('template immutability', () => {
  const api = new KubeApi(testKubeConfig());
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  const template = (kind: keyof typeof TEMPLATES, spec: Record<string, unknown> = TEMPLATES[kind]): Obj => ({
    apiVersion: INFRA,
    kind,
    metadata: { name: kind.toLowerCase(), namespace: ns.name },
    spec: { template: { spec: { ...spec } } },
  });
  const mergePatch = async (obj: Obj, body: unknown, dryRun = false): Promise<string | undefined> =>
    refusal(api.request('PATCH', await api.pathOf(obj), { body, contentType: 'application/merge-patch+json', query: dryRun ? { dryRun: 'All' } : {} }));
  /** Server-side apply as CAPI's topology controller does it (its field manager, forced). */
  const topologyApply = async (obj: Obj, dryRun: boolean): Promise<string | undefined> =>
    refusal(
      api.request('PATCH', await api.pathOf(obj), {
        body: obj,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'capi-topology', force: 'true', ...(dryRun ? { dryRun: 'All' } : {}) },
      }),
    );
  const storedSpec = async (obj: Obj): Promise<unknown> => (await api.get<Obj>(obj)).spec.template.spec;

  beforeAll(async () => {
    ns = await createNamespace('templates');
    for (const kind of Object.keys(TEMPLATES) as (keyof typeof TEMPLATES)[]) {
      const obj = template(kind);
      await api.request('POST', await api.pathOf({ ...obj, metadata: { ...obj.metadata, name: '' } }), { body: obj });
    }
  });
  afterAll(async () => {
    await ns.remove();
  });

  it.each([
    ['VSphereMachineTemplate', { numCpus: 8 }],
    ['VSphereClusterTemplate', { providerRefs: [{ name: 'vcenter-b' }] }],
  ] as const)('refuses a change to the spec of a %s, naming the object and what to do instead', async (kind, change) => {
    const obj = template(kind);
    // Policies load asynchronously after they are applied: wait until this one refuses.
    const message = await waitFor(`the change to ${kind} to be refused`, () => mergePatch(obj, { spec: { template: { spec: change } } }), 60_000);
    expect(message).toContain(`spec of ${kind} ${ns.name}/${obj.metadata.name} is immutable: create a new template`);
    expect(await storedSpec(obj)).toMatchObject(TEMPLATES[kind]);
  });

  it('admits metadata changes (labels, annotations) to a template', async () => {
    const obj = template('VSphereMachineTemplate');
    expect(await mergePatch(obj, { metadata: { labels: { team: 'blue' }, annotations: { note: 'kept' } } })).toBeUndefined();
    expect((await api.get<Obj>(obj)).metadata.labels).toMatchObject({ team: 'blue' });
  });

  it("admits CAPI topology's dry run of a new spec, and stores nothing", async () => {
    const obj = template('VSphereMachineTemplate', { ...TEMPLATES.VSphereMachineTemplate, numCpus: 8 });
    await waitFor('the plain change to be refused (policy loaded)', () => mergePatch(obj, { spec: { template: { spec: { numCpus: 8 } } } }), 60_000);
    obj.metadata.annotations = { [Annotation.capiTopologyDryRun]: '' };
    expect(await topologyApply(obj, true)).toBeUndefined();
    expect(await storedSpec(obj)).toMatchObject(TEMPLATES.VSphereMachineTemplate);
  });

  it('refuses the dry-run annotation on a real write, and a dry run without the annotation', async () => {
    const obj = template('VSphereClusterTemplate', { providerRefs: [{ name: 'vcenter-c' }] });
    await waitFor(
      'the plain change to be refused (policy loaded)',
      () => mergePatch(obj, { spec: { template: { spec: { providerRefs: [{ name: 'vcenter-c' }] } } } }),
      60_000,
    );
    expect(await topologyApply(obj, true)).toContain('is immutable');
    obj.metadata.annotations = { [Annotation.capiTopologyDryRun]: '' };
    expect(await topologyApply(obj, false)).toContain('is immutable');
    expect(await storedSpec(obj)).toMatchObject(TEMPLATES.VSphereClusterTemplate);
  });
});
