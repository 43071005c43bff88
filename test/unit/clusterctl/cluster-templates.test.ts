import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import {
  CLUSTERCLASS_FLAVOR,
  FLAVORS,
  RENDERABLE_FLAVORS,
  renderClusterTemplate,
  type RenderedTemplate,
  renderClusterWithValues,
  templateFileName,
} from '../../../infra/clusterctl/cluster-templates.js';
import { placeholder, type TemplateVariable } from '../../../infra/clusterctl/template-variables.js';

/** clusterctl's substitution, as far as the templates use it: `${NAME}` and `${NAME:=default}`. */
function envsubst(text: string, values: Record<string, string | number>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::=([^}]*))?\}/g, (_all, name: string, dflt: string | undefined) => {
    const value = values[name] ?? dflt;
    if (value === undefined) throw new Error(`${name} is not set`);
    return String(value);
  });
}

/** What clusterctl generates from: the flavor's asset after the ClusterClass asset it names, if any. */
const generationOf = (t: RenderedTemplate): string => [t.clusterClass?.yaml, t.yaml].filter((y) => y !== undefined).join('---\n');

function valuesOf(variables: readonly TemplateVariable[], overrides: Record<string, string | number> = {}): Record<string, string | number> {
  return Object.fromEntries(variables.filter((v) => v.default === undefined).map((v) => [v.name, overrides[v.name] ?? v.sample]));
}

describe('cluster templates', () => {
  it('ship one flavor per backend whose API entry has one and whose provider role is built, in backend order, then the ClusterClass one', () => {
    expect(FLAVORS).toEqual([...BACKEND_APIS.flatMap((b) => (b.clusterctl && b.providerRoleBuilt ? [b.clusterctl.flavor] : [])), CLUSTERCLASS_FLAVOR]);
    expect(FLAVORS.map(templateFileName)).toContain('cluster-template.yaml');
    expect(new Set(FLAVORS.map(templateFileName)).size).toBe(FLAVORS.length);
  });

  it("ship the flavors of today's backends under the names clusterctl users know", () => {
    expect(FLAVORS.map(templateFileName)).toEqual(
      expect.arrayContaining([
        'cluster-template.yaml',
        'cluster-template-proxmox.yaml',
        'cluster-template-libvirt.yaml',
        'cluster-template-cloud-hypervisor.yaml',
        'cluster-template-clusterclass.yaml',
      ]),
    );
  });

  // Every flavor, shipped or not: a backend's template is checked against its schema before its provider role is built.
  describe.each(RENDERABLE_FLAVORS.map((flavor) => ({ flavor, file: templateFileName(flavor) })))('$file', ({ flavor }) => {
    const template = renderClusterTemplate(flavor);

    it('substituted as clusterctl does, gives the build with values that passed the schema check', () => {
      const values = valuesOf(template.variables, { CLUSTER_NAME: 'c1', NAMESPACE: 'ns1', WORKER_MACHINE_COUNT: 2 });
      const generated = parseAllDocuments(envsubst(generationOf(template), { ...values, WORKER_MACHINE_CPUS: 8 })).map((d) => d.toJS() as unknown);
      expect(generated).toEqual(renderClusterWithValues(flavor, { ...values, WORKER_MACHINE_CPUS: 8 }));
    });

    it('keeps string values strings and integer values numbers whatever is substituted', () => {
      const values = valuesOf(template.variables, { CLUSTER_NAME: '123', CONTROL_PLANE_ENDPOINT_IP: 'true' });
      const docs = parseAllDocuments(envsubst(generationOf(template), values)).map((d) => d.toJS() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
      const cluster = docs.find((d) => d.kind === 'Cluster');
      expect(cluster?.metadata.name).toBe('123');
      // The endpoint is the InfraCluster's, or (a Cluster of a class) the class variable patched into it.
      const infraCluster = docs.find((d) => d.apiVersion === 'infrastructure.banlieue.io/v1alpha1' && /Cluster$/.test(d.kind));
      const endpoint =
        infraCluster?.spec.controlPlaneEndpoint ?? cluster?.spec.topology.variables.find((v: { name: string }) => v.name === 'controlPlaneEndpoint')?.value;
      expect(endpoint).toEqual({ host: 'true', port: 6443 });
    });

    it('has no "$" but its placeholders (clusterctl would substitute any other)', () => {
      expect(generationOf(template).replace(/\$\{[A-Z0-9_]+(:=[^}]*)?\}/g, '')).not.toContain('$');
      for (const v of template.variables) expect(generationOf(template)).toContain(placeholder(v));
    });

    it('is refused at build time when a value breaks the schema', () => {
      expect(() => renderClusterWithValues(flavor, { ...valuesOf(template.variables), CONTROL_PLANE_MACHINE_MEMORY_MIB: 1 })).toThrow(/memory|minimum|>= 128/i);
    });
  });

  describe('the ClusterClass flavor', () => {
    const docs = renderClusterWithValues(CLUSTERCLASS_FLAVOR) as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const byKind = (kind: string): Record<string, any>[] => docs.filter((d) => d.kind === kind); // eslint-disable-line @typescript-eslint/no-explicit-any

    it('ships the ClusterClass as the asset clusterctl looks it up by (clusterclass-<name>.yaml), the Cluster alone in the flavor', () => {
      const template = renderClusterTemplate(CLUSTERCLASS_FLAVOR);
      expect(template.clusterClass?.fileName).toBe('clusterclass-banlieue-vsphere.yaml');
      expect(parseAllDocuments(template.yaml).map((d) => (d.toJS() as { kind: string }).kind)).toEqual(['Cluster']);
    });

    it('ships every template its ClusterClass names, in the namespace of the class', () => {
      const [cls] = byKind('ClusterClass');
      const refs = [
        cls?.spec.infrastructure.templateRef,
        cls?.spec.controlPlane.templateRef,
        cls?.spec.controlPlane.machineInfrastructure.templateRef,
        ...cls?.spec.workers.machineDeployments.flatMap((md: any) => [md.bootstrap.templateRef, md.infrastructure.templateRef]), // eslint-disable-line @typescript-eslint/no-explicit-any
      ] as { apiVersion: string; kind: string; name: string }[];
      expect(refs.map((r) => r.kind).sort()).toEqual([
        'KubeadmConfigTemplate',
        'KubeadmControlPlaneTemplate',
        'VSphereClusterTemplate',
        'VSphereMachineTemplate',
        'VSphereMachineTemplate',
      ]);
      for (const r of refs) {
        expect(
          docs.find(
            (d) => d.apiVersion === r.apiVersion && d.kind === r.kind && d.metadata.name === r.name && d.metadata.namespace === cls?.metadata.namespace,
          ),
          `${r.kind} ${r.name}`,
        ).toBeDefined();
      }
    });

    it('gives the Cluster its endpoint through a class variable patched into the InfraClusterTemplate (the template itself has none)', () => {
      const [cls] = byKind('ClusterClass');
      const [cluster] = byKind('Cluster');
      expect(cluster?.spec.topology.classRef.name).toBe(cls?.metadata.name);
      expect(cluster?.spec.topology.variables).toEqual([{ name: 'controlPlaneEndpoint', value: { host: '192.0.2.10', port: 6443 } }]);
      expect(cls?.spec.patches[0].definitions[0]).toMatchObject({
        selector: { kind: 'VSphereClusterTemplate', matchResources: { infrastructureCluster: true } },
        jsonPatches: [{ op: 'add', path: '/spec/template/spec/controlPlaneEndpoint', valueFrom: { variable: 'controlPlaneEndpoint' } }],
      });
      expect(byKind('VSphereClusterTemplate')[0]?.spec.template.spec.controlPlaneEndpoint).toBeUndefined();
    });
  });
});
