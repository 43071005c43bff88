// Every banlieue object under examples/ must be valid against the API schema
// (the OpenAPI part; CEL rules are enforced by the API server only), and the
// examples must keep covering every kind a user writes.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { apiVersionOf } from '../../infra/api/kind.js';
import { ALL_KINDS, kindByName } from '../../infra/api/kinds.js';
import { BanlieueValidator } from '../../infra/api/validator.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLES = join(ROOT, 'examples');

interface KubeDoc {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: Record<string, unknown>;
}

interface ExampleDoc {
  /** Path relative to the repository root, e.g. examples/providers/vsphere.yaml. */
  readonly file: string;
  readonly obj: KubeDoc;
  /** Readable test name, e.g. "examples/providers/vsphere.yaml: Provider vsphere". */
  readonly name: string;
}

function yamlFiles(): string[] {
  return readdirSync(EXAMPLES, { recursive: true, encoding: 'utf8' })
    .filter((p) => /\.ya?ml$/.test(p))
    .map((p) => relative(ROOT, join(EXAMPLES, p)).split('\\').join('/'))
    .sort();
}

function parseFile(file: string): { docs: KubeDoc[]; errors: string[] } {
  const parsed = parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'));
  const errors = [...('empty' in parsed ? parsed.errors : []), ...parsed.flatMap((d) => d.errors)].map((e) => e.message);
  const docs = parsed.map((d) => d.toJS() as unknown).filter((o): o is KubeDoc => o !== null && typeof o === 'object');
  return { docs, errors };
}

const validator = new BanlieueValidator();
const files = yamlFiles();
const allDocs: ExampleDoc[] = files.flatMap((file) =>
  parseFile(file).docs.map((obj) => ({
    file,
    obj,
    name: `${file}: ${String(obj.kind)} ${obj.metadata?.name ?? '<unnamed>'}`,
  })),
);
const banlieueDocs = allDocs.filter((d) => validator.handles(String(d.obj.apiVersion), String(d.obj.kind)));

describe('examples/', () => {
  it('has YAML files and banlieue objects in them', () => {
    expect(files.length).toBeGreaterThan(0);
    expect(banlieueDocs.length).toBeGreaterThan(0);
  });

  it.each(files)('%s parses as YAML and every document has apiVersion, kind and a name', (file) => {
    const { docs, errors } = parseFile(file);
    expect(errors).toEqual([]);
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(doc.apiVersion, `${file}: apiVersion`).toBeTypeOf('string');
      expect(doc.kind, `${file}: kind`).toBeTypeOf('string');
      expect(doc.metadata?.name, `${file}: ${doc.kind} metadata.name`).toBeTypeOf('string');
    }
  });

  // [name, object] rows: `%s` keeps the whole name (`$name` would truncate it).
  it.each(banlieueDocs.map((d) => [d.name, d.obj] as const))('%s', (_name, obj) => {
    expect(validator.validate(obj)).toEqual([]);
    // Namespaced kinds say where they go; cluster-scoped kinds must not.
    const def = kindByName(String(obj.kind));
    if (def.scope === 'Namespaced') expect(obj.metadata?.namespace).toBe('vms');
    else expect(obj.metadata?.namespace).toBeUndefined();
  });

  it('covers every banlieue kind except the *ClusterTemplate kinds', () => {
    const seen = new Set(banlieueDocs.map((d) => `${String(d.obj.apiVersion)}/${String(d.obj.kind)}`));
    const missing = ALL_KINDS.filter((def) => !def.kind.endsWith('ClusterTemplate'))
      .map((def) => `${apiVersionOf(def)}/${def.kind}`)
      .filter((key) => !seen.has(key));
    expect(missing).toEqual([]);
  });

  it('two-vCenter example: the VSphereCluster names exactly two vsphere Providers of the same file', () => {
    const file = 'examples/cluster-api/vsphere-cluster-two-vcenters.yaml';
    const docs = allDocs.filter((d) => d.file === file).map((d) => d.obj);
    const clusters = docs.filter((o) => o.apiVersion === 'infrastructure.banlieue.io/v1alpha1' && o.kind === 'VSphereCluster');
    expect(clusters).toHaveLength(1);
    const refs = ((clusters[0]?.spec?.providerRefs ?? []) as { name: string }[]).map((r) => r.name);
    expect(refs).toHaveLength(2);
    expect(new Set(refs).size).toBe(2);
    const vsphereProviders = docs
      .filter((o) => o.apiVersion === 'banlieue.io/v1alpha1' && o.kind === 'Provider')
      .filter((o) => (o.spec?.providerClassRef as { name?: string } | undefined)?.name === 'vsphere')
      .filter((o) => o.metadata?.namespace === clusters[0]?.metadata?.namespace)
      .map((o) => o.metadata?.name);
    for (const ref of refs) expect(vsphereProviders).toContain(ref);
  });
});
