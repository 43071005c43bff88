// banlieue beside the projects a management cluster already runs: KubeVirt,
// VM Operator, CAPV, CAPMOX, clusterctl's inventory and the CSI snapshot kinds
// share its plurals (virtualmachines, providers, vspheremachines, …) and would
// share short names. Their CRDs are installed here with their real groups and
// names; every resource a kubectl command of README.md, docs/ and examples/
// names must then mean banlieue's kind, both to the real kubectl and to
// discovery whatever the group order (the name answers to no other kind).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { testKubeConfig } from '../support/kube.js';
import { docFiles, quotedKubectlCommands, resourcesNamed, type NamedResource } from '../support/quoted-kubectl.js';
import { clusterAdmin, kubectlAs, type Identity } from '../support/tenant.js';
import { waitFor } from '../support/wait.js';

interface ForeignKind {
  readonly group: string;
  /** Served versions, the last one stored. */
  readonly versions: readonly string[];
  readonly plural: string;
  readonly kind: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
}

const CAPI_INFRA = 'infrastructure.cluster.x-k8s.io';
const CAPV = ['v1beta1', 'v1beta2'];
const CAPMOX = ['v1alpha1', 'v1alpha2'];
const VMOP = ['v1alpha1', 'v1alpha2', 'v1alpha3', 'v1alpha4', 'v1alpha5'];
const kind = (group: string, versions: readonly string[], plural: string, k: string, shortNames: string[] = [], categories: string[] = []): ForeignKind => ({
  group,
  versions,
  plural,
  kind: k,
  shortNames,
  categories,
  scope: 'Namespaced',
});

/** Names as each project's CRDs declare them (KubeVirt's components, the others' kubebuilder markers). */
const FOREIGN: readonly ForeignKind[] = [
  kind('kubevirt.io', ['v1alpha3', 'v1'], 'virtualmachines', 'VirtualMachine', ['vm', 'vms'], ['all']),
  kind('kubevirt.io', ['v1alpha3', 'v1'], 'virtualmachineinstances', 'VirtualMachineInstance', ['vmi', 'vmis'], ['all']),
  kind('vmoperator.vmware.com', VMOP, 'virtualmachines', 'VirtualMachine', ['vm']),
  kind('vmoperator.vmware.com', VMOP, 'virtualmachineimages', 'VirtualMachineImage', ['vmi', 'vmimage']),
  kind('vmoperator.vmware.com', VMOP, 'virtualmachineclasses', 'VirtualMachineClass', ['vmclass']),
  kind(CAPI_INFRA, CAPV, 'vspheremachines', 'VSphereMachine', [], ['cluster-api']),
  kind(CAPI_INFRA, CAPV, 'vspheremachinetemplates', 'VSphereMachineTemplate', [], ['cluster-api']),
  kind(CAPI_INFRA, CAPV, 'vsphereclusters', 'VSphereCluster', [], ['cluster-api']),
  kind(CAPI_INFRA, CAPV, 'vsphereclustertemplates', 'VSphereClusterTemplate', [], ['cluster-api']),
  kind(CAPI_INFRA, CAPMOX, 'proxmoxmachines', 'ProxmoxMachine', ['moxm'], ['cluster-api', 'proxmox']),
  kind(CAPI_INFRA, CAPMOX, 'proxmoxmachinetemplates', 'ProxmoxMachineTemplate', ['pmt'], ['cluster-api']),
  kind(CAPI_INFRA, CAPMOX, 'proxmoxclusters', 'ProxmoxCluster', [], ['cluster-api']),
  kind(CAPI_INFRA, CAPMOX, 'proxmoxclustertemplates', 'ProxmoxClusterTemplate', ['pct'], ['cluster-api']),
  kind('clusterctl.cluster.x-k8s.io', ['v1alpha3'], 'providers', 'Provider', [], ['cluster-api']),
  { ...kind('snapshot.storage.k8s.io', ['v1'], 'volumesnapshotcontents', 'VolumeSnapshotContent', ['vsc', 'vscs']), scope: 'Cluster' },
];
const crdName = (k: ForeignKind): string => `${k.plural}.${k.group}`;

function crdOf(k: ForeignKind): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: crdName(k),
      // The API server refuses a CRD in a *.k8s.io group without this annotation.
      ...(k.group.endsWith('.k8s.io') ? { annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes-csi/external-snapshotter' } } : {}),
    },
    spec: {
      group: k.group,
      scope: k.scope,
      names: { plural: k.plural, singular: k.kind.toLowerCase(), kind: k.kind, shortNames: k.shortNames, categories: k.categories },
      versions: k.versions.map((name, i) => ({
        name,
        served: true,
        storage: i === k.versions.length - 1,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

/** Kubernetes' own kinds the docs name (`get deploy,pods`, `annotate crd`): not banlieue's, by design. */
const BUILT_IN: ReadonlySet<string> = new Set(
  [
    'deploy',
    'deployment',
    'pod',
    'po',
    'lease',
    'clusterrole',
    'crd',
    'customresourcedefinition',
    'secret',
    'namespace',
    'ns',
    'configmap',
    'cm',
    'serviceaccount',
    'sa',
    'event',
    'ev',
    'node',
  ].flatMap((n) => [n, `${n}s`]),
);

const isBuiltIn = ({ resource }: NamedResource): boolean => BUILT_IN.has(resource.toLowerCase().split('.')[0] ?? '');

const BANLIEUE_GROUPS: ReadonlySet<string> = new Set(ALL_KINDS.map((k) => k.group));
/** Verbs whose resource argument may be a category (kubectl's resource builder expands those first). */
const CATEGORY_VERBS = new Set(['get', 'describe', 'annotate', 'label', 'patch', 'delete', 'edit', 'wait']);

/** One served resource, as discovery lists it. */
interface Discovered {
  readonly group: string;
  readonly name: string;
  readonly singularName: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
}

/** Every resource the API server serves, from legacy discovery (what kubectl's RESTMapper is built from). */
async function discover(api: KubeApi): Promise<Discovered[]> {
  const groups = await api.request<{ groups: { name: string; versions: { groupVersion: string }[] }[] }>('GET', '/apis');
  const lists = [{ group: '', path: '/api/v1' }, ...groups.groups.flatMap((g) => g.versions.map((v) => ({ group: g.name, path: `/apis/${v.groupVersion}` })))];
  const found = new Map<string, Discovered>();
  for (const { group, path } of lists) {
    const list = await api.request<{ resources: { name: string; singularName?: string; shortNames?: string[]; categories?: string[] }[] }>('GET', path);
    for (const r of list.resources.filter((x) => !x.name.includes('/'))) {
      found.set(`${r.name}.${group}`, {
        group,
        name: r.name,
        singularName: r.singularName ?? '',
        shortNames: r.shortNames ?? [],
        categories: r.categories ?? [],
      });
    }
  }
  return [...found.values()];
}

const label = (r: Discovered): string => (r.group ? `${r.name}.${r.group}` : r.name);

/**
 * What `resource` can mean to kubectl, whatever order the groups come in: the
 * kinds of a category, or every kind whose plural, singular or short name it
 * is (within its group when it names one: `virtualmachines.banlieue.io`; for
 * explain, the longest `plural.group` prefix of its field path).
 */
function meanings(all: readonly Discovered[], { verb, resource }: NamedResource): Discovered[] {
  const typed = resource.toLowerCase();
  if (CATEGORY_VERBS.has(verb) && all.some((r) => r.categories.includes(typed))) return all.filter((r) => r.categories.includes(typed));
  const [first = '', ...rest] = typed.split('.');
  const named = all.filter((r) => r.name === first || r.singularName === first || r.shortNames.includes(first));
  if (verb === 'explain') {
    const prefixed = named.filter((r) => typed === `${r.name}.${r.group}` || typed.startsWith(`${r.name}.${r.group}.`));
    return prefixed.length > 0 ? prefixed : named;
  }
  const group = rest.join('.');
  return group ? named.filter((r) => r.group === group || r.group === rest.slice(1).join('.')) : named;
}

describe('Names that coexist with KubeVirt, VM Operator, CAPV, CAPMOX and clusterctl', () => {
  const api = new KubeApi(testKubeConfig());
  const cacheDirs: string[] = [];
  const cacheDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'banlieue-kubectl-cache-'));
    cacheDirs.push(dir);
    return `--cache-dir=${dir}`;
  };
  // kubectl caches discovery: the shared cache, and one filled before the CRDs below exist, would miss them.
  const admin: Identity = { ...clusterAdmin, flags: [cacheDir()] };
  let reader: Identity = admin;
  let served: Discovered[] = [];

  beforeAll(async () => {
    const applied = await kubectlAs(
      admin,
      ['apply', '--server-side', '--field-manager=banlieue-test', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: FOREIGN.map(crdOf) }),
    );
    if (applied.code !== 0) throw new Error(`installing the foreign CRDs: ${applied.stderr}`);
    const established = await kubectlAs(admin, ['wait', '--for=condition=Established', '--timeout=60s', ...FOREIGN.map((k) => `crd/${crdName(k)}`)]);
    if (established.code !== 0) throw new Error(`waiting for the foreign CRDs: ${established.stderr}`);
    served = await waitFor('discovery to serve the foreign kinds', async () => {
      const all = await discover(api);
      return FOREIGN.every((k) => all.some((r) => r.group === k.group && r.name === k.plural)) ? all : undefined;
    });
    reader = { ...clusterAdmin, flags: [cacheDir()] };
  });

  afterAll(async () => {
    // Cluster-scoped and the API server is shared: gone before the next suite runs. Each kind is listed once
    // first: the CRD finalizer's own list of a kind nobody read can find its storage still filling, and its
    // retry then waits for a 5-minute resync (crd-deletion.test.ts says how).
    // That first list can itself be refused while the storage fills (429): it is asked until it is answered.
    for (const k of FOREIGN) {
      const path = `/apis/${k.group}/${k.versions[k.versions.length - 1] ?? ''}/${k.plural}`;
      await waitFor(`${k.plural}.${k.group} listed`, () =>
        api.request('GET', path).then(
          () => true,
          () => undefined,
        ),
      );
    }
    const deleted = await kubectlAs(admin, ['delete', 'crd', '--ignore-not-found', '--timeout=60s', ...FOREIGN.map(crdName)]);
    if (deleted.code !== 0) throw new Error(`deleting the foreign CRDs: ${deleted.stderr}`);
    await waitFor('the foreign CRDs to be gone', async () => {
      for (const k of FOREIGN) {
        const gone = await api.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName(k)}`).then(
          () => false,
          (err: { code?: number }) => err.code === 404,
        );
        if (!gone) return undefined;
      }
      return true;
    });
    for (const dir of cacheDirs) rmSync(dir, { recursive: true, force: true });
  });

  /** Why `named` is not banlieue's kind alone; empty when it is. */
  async function problems(named: NamedResource): Promise<string[]> {
    const found: string[] = [];
    const means = meanings(served, named);
    if (means.length === 0) found.push('names no served kind');
    const others = means.filter((r) => !BANLIEUE_GROUPS.has(r.group));
    if (others.length > 0) found.push(`also means ${others.map(label).join(', ')}`);
    if (named.verb === 'explain') {
      const run = await kubectlAs(reader, ['explain', named.resource]);
      const group = /^GROUP:\s+(\S+)/m.exec(run.stdout)?.[1];
      if (!group || !BANLIEUE_GROUPS.has(group)) found.push(`kubectl explain says GROUP ${group ?? `nothing (${run.stderr.trim()})`}`);
    } else {
      // What kubectl itself requests for the name (-v=6 logs each request's URL).
      const run = await kubectlAs(reader, ['get', named.resource, '-A', '-o', 'name', '-v=6']);
      const groups = [...run.stderr.matchAll(/url="[^"]*?\/apis\/([^/]+)\/[^/]+\/(?:namespaces\/[^/]+\/)?[a-z]+\?/g)].map((m) => m[1] ?? '');
      const core = /url="[^"]*?\/api\/v1\/(?:namespaces\/[^/]+\/)?[a-z]+\?/.test(run.stderr);
      if (groups.length === 0 && !core) found.push(`kubectl get lists nothing (${run.stderr.split('\n').find((l) => l.startsWith('error')) ?? run.code})`);
      const wrong = [...new Set(groups)].filter((g) => !BANLIEUE_GROUPS.has(g));
      if (core || wrong.length > 0) found.push(`kubectl get lists ${[...(core ? ['core'] : []), ...wrong].join(', ')}`);
      for (const warning of run.stderr.match(/could also match lower priority resource \S+/g) ?? []) found.push(`kubectl warns: ${warning}`);
    }
    return found;
  }

  it('resolves every resource a kubectl command of README.md, docs/ and examples/ names to banlieue, and to banlieue only', async () => {
    const commands = quotedKubectlCommands('.', docFiles('.'));
    const named = commands.flatMap((c) => resourcesNamed(c.command).map((r) => ({ ...c, ...r })));
    // The parse found the commands users copy, not nothing.
    expect(named.filter((n) => !isBuiltIn(n)).length).toBeGreaterThanOrEqual(10);
    expect([...new Set(named.map((n) => n.verb))]).toEqual(expect.arrayContaining(['get', 'annotate', 'patch', 'explain', 'auth can-i']));

    const verdicts = new Map<string, Promise<string[]>>();
    const failures: string[] = [];
    for (const n of named.filter((x) => !isBuiltIn(x))) {
      const key = `${n.verb === 'explain' ? 'explain' : 'get'} ${n.resource}`;
      const verdict = verdicts.get(key) ?? problems(n);
      verdicts.set(key, verdict);
      for (const p of await verdict) failures.push(`${n.file}:${n.line} \`${n.command}\`: ${n.resource} ${p}`);
    }
    expect(failures).toEqual([]);
  });

  it('gives banlieue short names that no other served kind answers to', async () => {
    const failures: string[] = [];
    for (const short of served.filter((r) => BANLIEUE_GROUPS.has(r.group)).flatMap((r) => r.shortNames)) {
      for (const p of await problems({ verb: 'get', resource: short })) failures.push(`${short} ${p}`);
    }
    expect(failures).toEqual([]);
  });
});
