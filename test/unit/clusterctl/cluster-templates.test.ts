import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { FLAVORS, renderClusterTemplate, renderClusterWithValues, templateFileName } from '../../../infra/clusterctl/cluster-templates.js';
import { placeholder, type TemplateVariable } from '../../../infra/clusterctl/template-variables.js';

/** clusterctl's substitution, as far as the templates use it: `${NAME}` and `${NAME:=default}`. */
function envsubst(text: string, values: Record<string, string | number>): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::=([^}]*))?\}/g, (_all, name: string, dflt: string | undefined) => {
    const value = values[name] ?? dflt;
    if (value === undefined) throw new Error(`${name} is not set`);
    return String(value);
  });
}

function valuesOf(variables: readonly TemplateVariable[], overrides: Record<string, string | number> = {}): Record<string, string | number> {
  return Object.fromEntries(variables.filter((v) => v.default === undefined).map((v) => [v.name, overrides[v.name] ?? v.sample]));
}

describe('cluster templates', () => {
  it('ship the default flavor and one per backend that provisions machines', () => {
    expect(FLAVORS.map(templateFileName)).toEqual([
      'cluster-template.yaml',
      'cluster-template-proxmox.yaml',
      'cluster-template-libvirt.yaml',
      'cluster-template-cloud-hypervisor.yaml',
    ]);
  });

  describe.each(FLAVORS.map((flavor) => ({ flavor, file: templateFileName(flavor) })))('$file', ({ flavor }) => {
    const template = renderClusterTemplate(flavor);

    it('substituted as clusterctl does, gives the build with values that passed the schema check', () => {
      const values = valuesOf(template.variables, { CLUSTER_NAME: 'c1', NAMESPACE: 'ns1', WORKER_MACHINE_COUNT: 2 });
      const generated = parseAllDocuments(envsubst(template.yaml, { ...values, WORKER_MACHINE_CPUS: 8 })).map((d) => d.toJS() as unknown);
      expect(generated).toEqual(renderClusterWithValues(flavor, { ...values, WORKER_MACHINE_CPUS: 8 }));
    });

    it('keeps string values strings and integer values numbers whatever is substituted', () => {
      const values = valuesOf(template.variables, { CLUSTER_NAME: '123', CONTROL_PLANE_ENDPOINT_IP: 'true' });
      const [cluster, infraCluster] = parseAllDocuments(envsubst(template.yaml, values)).map((d) => d.toJS() as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
      expect(cluster?.metadata.name).toBe('123');
      expect(infraCluster?.spec.controlPlaneEndpoint).toEqual({ host: 'true', port: 6443 });
    });

    it('has no "$" but its placeholders (clusterctl would substitute any other)', () => {
      expect(template.yaml.replace(/\$\{[A-Z0-9_]+(:=[^}]*)?\}/g, '')).not.toContain('$');
      for (const v of template.variables) expect(template.yaml).toContain(placeholder(v));
    });

    it('is refused at build time when a value breaks the schema', () => {
      expect(() => renderClusterWithValues(flavor, { ...valuesOf(template.variables), CONTROL_PLANE_MACHINE_MEMORY_MIB: 1 })).toThrow(/memory|minimum|>= 128/i);
    });
  });

  it('docs/cluster-api.md lists every variable with the flavors using it and its default', () => {
    const doc = readFileSync('docs/cluster-api.md', 'utf8');
    const rows = new Map([...doc.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \| ([^|]+) \|/gm)].map((m) => [m[1], { flavors: m[2]?.trim(), dflt: m[3]?.trim() }]));
    const expected = new Map<string, { flavors: string[]; v: TemplateVariable }>();
    for (const flavor of FLAVORS) {
      for (const v of renderClusterTemplate(flavor).variables) {
        const e = expected.get(v.name) ?? { flavors: [], v };
        e.flavors.push(flavor || 'default');
        expected.set(v.name, e);
      }
    }
    expect([...rows.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [name, { flavors, v }] of expected) {
      const dflt = v.setBy ? `set by ${v.setBy}` : v.default === undefined ? '**required**' : `\`${v.default}\``;
      expect(rows.get(name), name).toEqual({ flavors: flavors.length === FLAVORS.length ? 'all' : flavors.join(', '), dflt });
    }
  });
});
