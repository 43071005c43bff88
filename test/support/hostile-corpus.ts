// A deterministic corpus of malformed banlieue objects over every kind, for
// suites that feed them to the API server and to `banlieue validate`. Valid
// bases come from examples/ (kept valid by their own tests, so they follow
// schema changes); each variant changes one thing: a wrong type, a huge or
// hostile string, an unknown or deeply nested field, a missing field, a bad
// name, label, kind or version.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import type { SeededRandom } from './seeded-random.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type CorpusObject = { apiVersion: string; kind: string; metadata: { name: string; [k: string]: Json }; [k: string]: Json };

export interface CorpusCase {
  /** What was changed, e.g. `VSphereMachine spec.numCpus: a string`. */
  readonly description: string;
  readonly object: CorpusObject;
}

/** Strings a backend may see: markup for SOAP and libvirt XML, shell for cloud-init, unicode, control characters. */
const HOSTILE_STRINGS: readonly [string, string][] = [
  ['XML markup', '</name><injected attr="1">&amp;&lt;'],
  ['a SOAP envelope', '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"/>'],
  ['shell metacharacters', '$(reboot); `id` | rm -rf / && echo $HOME'],
  ['unicode', 'vm-ünïcødé-名前-😀'],
  ['control characters', 'line\u0000nul\u0007bell\r\nnext'],
  ['a 70 KB string', 'x'.repeat(70_000)],
  ['an empty string', ''],
];

const deepNesting = (depth: number): Json => (depth === 0 ? 'bottom' : { nested: deepNesting(depth - 1) });

function manifests(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return manifests(p);
      return /\.ya?ml$/.test(p) ? [p] : [];
    });
}

/** One valid object per banlieue kind: the first example of it, or one derived from an example. */
export function validBases(examplesDir = 'examples'): Map<string, CorpusObject> {
  const bases = new Map<string, CorpusObject>();
  for (const file of manifests(examplesDir)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const o = doc.toJS() as CorpusObject | null;
      if (o && ALL_KINDS.some((k) => k.kind === o.kind) && !bases.has(o.kind)) bases.set(o.kind, o);
    }
  }
  // InfraCluster kinds share one spec; their templates wrap it.
  const cluster = [...bases.values()].find((o) => o.kind.endsWith('Cluster'));
  for (const def of ALL_KINDS) {
    if (bases.has(def.kind) || !cluster) continue;
    if (def.kind.endsWith('Cluster')) bases.set(def.kind, { ...structuredClone(cluster), kind: def.kind });
    if (def.kind.endsWith('ClusterTemplate')) {
      bases.set(def.kind, {
        ...structuredClone(cluster),
        kind: def.kind,
        spec: { template: cluster.spec === undefined ? {} : { spec: structuredClone(cluster.spec) } },
      });
    }
  }
  for (const o of bases.values()) delete o.metadata.namespace;
  return bases;
}

interface Leaf {
  readonly path: (string | number)[];
  readonly value: Json;
}

/** Every node under spec (objects, arrays and scalars), depth first. */
function nodesOf(value: Json, path: (string | number)[]): Leaf[] {
  const here: Leaf = { path, value };
  if (Array.isArray(value)) return [here, ...value.flatMap((v, i) => nodesOf(v, [...path, i]))];
  if (value && typeof value === 'object') return [here, ...Object.entries(value).flatMap(([k, v]) => nodesOf(v, [...path, k]))];
  return [here];
}

const fieldOf = (path: (string | number)[]): string => path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');

function withChange(
  base: CorpusObject,
  path: (string | number)[],
  change: (parent: Record<string | number, Json>, key: string | number) => void,
): CorpusObject {
  const copy = structuredClone(base);
  let parent = copy as unknown as Record<string | number, Json>;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, Json>;
  change(parent, path[path.length - 1] as string | number);
  return copy;
}

/** Values of another type than `value`'s. */
function wrongTypes(value: Json): [string, Json][] {
  if (typeof value === 'string')
    return [
      ['a number', 12345],
      ['a list', [value]],
    ];
  if (typeof value === 'number')
    return [
      ['a string', String(value)],
      ['a negative number', -1],
      ['a huge number', 2 ** 53],
      ['a fraction', 1.5],
    ];
  if (typeof value === 'boolean') return [['a string', 'yes']];
  if (Array.isArray(value))
    return [
      ['a string', 'not-a-list'],
      ['an empty list', []],
    ];
  return [['a string', 'not-an-object']];
}

function specVariants(base: CorpusObject): CorpusCase[] {
  const cases: CorpusCase[] = [];
  for (const { path, value } of nodesOf(base.spec ?? {}, ['spec'])) {
    const field = fieldOf(path);
    const at = (what: string, object: CorpusObject): void => void cases.push({ description: `${base.kind} ${field}: ${what}`, object });
    if (path.length > 1) {
      for (const [what, bad] of wrongTypes(value))
        at(
          what,
          withChange(base, path, (p, k) => (p[k] = bad)),
        );
      if (typeof path[path.length - 1] === 'string')
        at(
          'removed',
          withChange(base, path, (p, k) => delete p[k]),
        );
    }
    if (typeof value === 'string')
      for (const [what, bad] of HOSTILE_STRINGS)
        at(
          what,
          withChange(base, path, (p, k) => (p[k] = bad)),
        );
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      at(
        'an unknown field',
        withChange(base, [...path, 'unknownFieldx'], (p, k) => (p[k] = 'x')),
      );
      at(
        'a 64-level nested unknown field',
        withChange(base, [...path, 'nested'], (p, k) => (p[k] = deepNesting(64))),
      );
    }
  }
  return cases;
}

function metadataVariants(base: CorpusObject): CorpusCase[] {
  const variants: [string, (o: CorpusObject) => void][] = [
    ['an underscore and capitals in the name', (o) => (o.metadata.name = 'Web_1')],
    ['a 254-character name', (o) => (o.metadata.name = 'a'.repeat(254))],
    ['a 64-character name', (o) => (o.metadata.name = 'a'.repeat(64))],
    // The longest a name may be: every name derived from it (field managers, Leases, Events, Secrets, failure domains) must fit too.
    ['a 253-character name', (o) => (o.metadata.name = `${'long.'.repeat(50)}abc`)],
    ['a unicode name', (o) => (o.metadata.name = 'vm-名前')],
    ['a name starting with a dash', (o) => (o.metadata.name = '-web')],
    ['a name that is a number', (o) => (o.metadata.name = 42 as unknown as string)],
    ['a 100 KB label value', (o) => (o.metadata.labels = { app: 'v'.repeat(100_000) })],
    ['a label key with shell metacharacters', (o) => (o.metadata.labels = { '$(reboot)': 'x' })],
    ['an unknown metadata field', (o) => (o.metadata.nmae = 'x')],
    ['a misspelt kind', (o) => (o.kind = `${o.kind.slice(0, -2)}${o.kind.slice(-1)}${o.kind.slice(-2, -1)}`)],
    ['a version banlieue does not serve', (o) => (o.apiVersion = o.apiVersion.replace('v1alpha1', 'v1beta1'))],
    ['an unknown top-level field', (o) => (o.specs = {})],
    ['no spec', (o) => delete o.spec],
    ['a spec that is a string', (o) => (o.spec = 'spec')],
  ];
  return variants.map(([what, change]) => {
    const object = structuredClone(base);
    change(object);
    return { description: `${base.kind} ${what}`, object };
  });
}

/** The corpus: for every kind, its valid base, then every variant; the same list on every run. */
export function hostileCorpus(examplesDir = 'examples'): CorpusCase[] {
  return corpusOf(validBases(examplesDir));
}

/** The corpus of given bases, e.g. bases pointed at a test's own Provider, class and image so that variants reach its backend. */
export function corpusOf(bases: ReadonlyMap<string, CorpusObject>): CorpusCase[] {
  return [...bases.values()].flatMap((base) => [
    { description: `${base.kind} as in examples/`, object: base },
    ...metadataVariants(base),
    ...specVariants(base),
  ]);
}

/** The kind a case was made from (a misspelt kind counts as the kind it misspells): the first word of its description. */
export const baseKindOf = (c: CorpusCase): string => c.description.split(' ')[0] ?? '';

/**
 * A seeded sample: `count(kind)` cases of each kind (all when fewer), the valid base always among them;
 * the same sample for the same seed. Cases keep their corpus order.
 */
export function sampleOfEachKind(cases: readonly CorpusCase[], count: (kind: string) => number, random: SeededRandom): CorpusCase[] {
  const byKind = new Map<string, CorpusCase[]>();
  for (const c of cases) {
    const ofKind = byKind.get(baseKindOf(c)) ?? [];
    ofKind.push(c);
    byKind.set(baseKindOf(c), ofKind);
  }
  const chosen = new Set<CorpusCase>();
  for (const [kind, ofKind] of byKind) {
    const [base, ...variants] = ofKind;
    if (base) chosen.add(base);
    for (const c of random.sample(variants, Math.max(0, count(kind) - 1))) chosen.add(c);
  }
  return cases.filter((c) => chosen.has(c));
}
