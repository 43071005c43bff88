import { describe, expect, it } from 'vitest';
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import { CAPI_CONTRACT_LABEL, CORE_GROUP, INFRA_GROUP } from '../../../infra/api/kind.js';
import { ALL_KINDS, CORE_KINDS, INFRA_KINDS } from '../../../infra/api/kinds.js';
import { toCustomResourceDefinition } from '../../../infra/crds/custom-resource-definition.js';

const crds = ALL_KINDS.map((def) => ({ def, crd: toCustomResourceDefinition(def) }));

type Node = Record<string, unknown>;
const versionOf = (crd: ReturnType<typeof toCustomResourceDefinition>): Node => (crd.spec.versions as Node[])[0] as Node;
const schemaOf = (crd: ReturnType<typeof toCustomResourceDefinition>): Node => (versionOf(crd).schema as Node).openAPIV3Schema as Node;

/** Visit every schema node with its path. */
function walk(node: Node, path: string, visit: (node: Node, path: string) => void): void {
  visit(node, path);
  for (const [key, child] of Object.entries((node.properties as Record<string, Node> | undefined) ?? {})) {
    walk(child, `${path}.${key}`, visit);
  }
  if (node.items) walk(node.items as Node, `${path}[]`, visit);
  if (node.additionalProperties && typeof node.additionalProperties === 'object') {
    walk(node.additionalProperties as Node, `${path}{}`, visit);
  }
}

describe('CustomResourceDefinitions', () => {
  it('carries the CAPI contract label on exactly the infrastructure CRDs', () => {
    const labelled = crds.filter(({ crd }) => crd.metadata.labels[CAPI_CONTRACT_LABEL] === 'v1alpha1').map(({ def }) => def.kind);
    expect(labelled.sort()).toEqual(INFRA_KINDS.map((k) => k.kind).sort());
    for (const { def, crd } of crds) {
      if (def.group === CORE_GROUP) expect(Object.keys(crd.metadata.labels)).not.toContain(CAPI_CONTRACT_LABEL);
    }
  });

  it('names every CRD <flect plural>.<group>, as CAPI looks them up', () => {
    expect(crds.map(({ crd }) => crd.metadata.name).sort()).toEqual(
      [
        'virtualmachines.banlieue.io',
        'providers.banlieue.io',
        'vmclasses.banlieue.io',
        'vmimages.banlieue.io',
        // Each backend's kind prefix, lower-cased: vsphere, proxmox, libvirt, cloudhypervisor, and any backend added since.
        ...BACKEND_APIS.map((api) => api.machine.kind.replace(/Machine$/, '').toLowerCase()).flatMap((b) => [
          `${b}machines.${INFRA_GROUP}`,
          `${b}machinetemplates.${INFRA_GROUP}`,
          `${b}clusters.${INFRA_GROUP}`,
          `${b}clustertemplates.${INFRA_GROUP}`,
        ]),
      ].sort(),
    );
    expect(crds.map(({ crd }) => crd.metadata.name)).toEqual(
      expect.arrayContaining(['vsphere', 'proxmox', 'libvirt', 'cloudhypervisor'].map((b) => `${b}machines.${INFRA_GROUP}`)),
    );
  });

  it.each(crds.map(({ def, crd }) => [def.kind, def, crd] as const))('%s has names, scope, categories and columns', (_, def, crd) => {
    const names = crd.spec.names as Node;
    expect(names.plural).toBe(def.plural);
    expect(names.singular).toBe(def.kind.toLowerCase());
    expect((names.shortNames as string[]).length).toBeGreaterThan(0);
    expect(names.categories).toContain('banlieue');
    if (def.group === INFRA_GROUP) expect(names.categories).toContain('cluster-api');
    expect(crd.spec.scope).toBe(def.scope);
    expect((versionOf(crd).additionalPrinterColumns as Node[]).map((c) => c.name)).toContain('Age');
    expect(Boolean(versionOf(crd).subresources)).toBe(def.status !== undefined);
  });

  it('gives the core kinds the short names users type', () => {
    const short = Object.fromEntries(CORE_KINDS.map((k) => [k.kind, k.shortNames[0]]));
    expect(short).toEqual({ VirtualMachine: 'bvm', Provider: 'bprov', VMClass: 'bvmc', VMImage: 'bvmi' });
    expect(CORE_KINDS.map((k) => k.scope)).toEqual(['Namespaced', 'Namespaced', 'Cluster', 'Cluster']);
  });

  it("gives every kind short names of banlieue's own, none another project's (KubeVirt's vm and vmi, the CSI snapshotter's vsc)", () => {
    const shorts = ALL_KINDS.flatMap((k) => k.shortNames);
    expect(shorts.filter((s) => !s.startsWith('b'))).toEqual([]);
    expect(new Set(shorts).size).toBe(shorts.length);
  });

  it.each(crds.map(({ def, crd }) => [def.kind, crd] as const))('%s schema is structural and fully described', (_, crd) => {
    walk(schemaOf(crd), '', (node, path) => {
      for (const forbidden of ['anyOf', 'oneOf', 'allOf', 'const', 'patternProperties', '$ref']) {
        expect(node, `${path} uses ${forbidden}`).not.toHaveProperty(forbidden);
      }
      expect(node.type, `${path} has no type`).toBeTypeOf('string');
      if (path.split('.').length > 1 && path !== '.metadata' && !path.endsWith('[]') && !path.endsWith('{}')) {
        expect(node.description, `${path} has no description`).toBeTypeOf('string');
      }
      if (node['x-kubernetes-list-type'] === 'map') {
        const item = node.items as Node;
        for (const key of node['x-kubernetes-list-map-keys'] as string[]) {
          expect(item.required, `${path} map key ${key} must be required`).toContain(key);
        }
      }
    });
  });

  it('keys shared lists by their writer: conditions by type, perProvider by provider, failureDomains by name', () => {
    const listKeys = new Map<string, string[]>();
    for (const { def, crd } of crds) {
      walk(schemaOf(crd), def.kind, (node, path) => {
        if (node['x-kubernetes-list-type'] === 'map') listKeys.set(path, node['x-kubernetes-list-map-keys'] as string[]);
      });
    }
    expect(listKeys.get('VirtualMachine.status.conditions')).toEqual(['type']);
    expect(listKeys.get('VMImage.status.perProvider')).toEqual(['providerNamespace', 'providerName']);
    expect(listKeys.get('Provider.status.failureDomains')).toEqual(['name']);
    expect(listKeys.get('VSphereCluster.status.failureDomains')).toEqual(['name']);
    expect(listKeys.get('VSphereMachine.status.conditions')).toEqual(['type']);
  });

  it('makes spec.providerID immutable on every machine kind, and leaves template immutability to admission (CAPI dry runs must pass)', () => {
    for (const { def, crd } of crds.filter(({ def }) => def.group === INFRA_GROUP)) {
      const spec = (schemaOf(crd).properties as Record<string, Node>).spec as Node;
      const rules = ((spec['x-kubernetes-validations'] as Node[] | undefined) ?? []).map((r) => r.rule as string);
      if (def.kind.endsWith('Template'))
        expect(
          rules.filter((r) => r.includes('oldSelf')),
          def.kind,
        ).toEqual([]);
      else if (def.kind.endsWith('Machine'))
        expect(
          rules.some((r) => r.includes('oldSelf.providerID')),
          def.kind,
        ).toBe(true);
    }
  });
});
