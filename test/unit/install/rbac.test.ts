import { describe, expect, it } from 'vitest';
import { Label } from '../../../infra/api/well-known.js';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';

const objects = renderInstall({ admissionPolicies: true, networkPolicies: true }).flatMap((c) => c.objects);
const clusterRole = (name: string): ManifestObject => {
  const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === name);
  if (!role) throw new Error(`ClusterRole ${name} not rendered`);
  return role;
};
interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
const rulesOf = (o: ManifestObject): Rule[] => o.rules as Rule[];

describe('RBAC', () => {
  it('aggregates banlieue-capi-infrastructure into the CAPI manager with exactly the infrastructure kinds', () => {
    const role = clusterRole('banlieue-capi-infrastructure');
    expect(role.metadata.labels?.[Label.capiAggregateToManager]).toBe('true');
    const backends = ['vsphere', 'proxmox', 'libvirt', 'cloudhypervisor'];
    const expected = backends
      .flatMap((b) => [
        `${b}machines`,
        `${b}machines/status`,
        `${b}machinetemplates`,
        `${b}clusters`,
        `${b}clusters/status`,
        `${b}clustertemplates`,
      ])
      .sort();
    expect(rulesOf(role)).toEqual([
      {
        apiGroups: ['infrastructure.banlieue.io'],
        resources: expected,
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ]);
  });

  it('does not aggregate banlieue-controller into anything', () => {
    const role = clusterRole('banlieue-controller');
    expect(Object.keys(role.metadata.labels ?? {}).filter((l) => l.includes('aggregate'))).toEqual([]);
    expect(role).not.toHaveProperty('aggregationRule');
  });

  it('never grants list or watch on Secrets, and no wildcards, in any role', () => {
    const roles = objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
    expect(roles.length).toBeGreaterThan(5);
    for (const role of roles) {
      for (const rule of rulesOf(role)) {
        const where = `${role.kind} ${role.metadata.name}`;
        expect(rule.verbs, where).not.toContain('*');
        expect(rule.resources, where).not.toContain('*');
        expect(rule.apiGroups, where).not.toContain('*');
        if (rule.resources.includes('secrets')) {
          expect(rule.verbs, where).not.toContain('list');
          expect(rule.verbs, where).not.toContain('watch');
          expect(rule.verbs, where).not.toContain('delete');
        }
      }
    }
  });

  it('gives each provider its own machine kind and not the others', () => {
    const vsphere = rulesOf(clusterRole('banlieue-provider-vsphere')).flatMap((r) => r.resources);
    expect(vsphere).toContain('vspheremachines/status');
    expect(vsphere.some((r) => r.startsWith('proxmox'))).toBe(false);
    expect(vsphere).not.toContain('virtualmachines');
  });

  it('binds every ClusterRole except the CAPI one to the ServiceAccount of the same name', () => {
    for (const role of objects.filter((o) => o.kind === 'ClusterRole' && o.metadata.name !== 'banlieue-capi-infrastructure')) {
      const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === role.metadata.name);
      expect(binding, role.metadata.name).toBeDefined();
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: role.metadata.name, namespace: 'banlieue-system' }]);
    }
  });
});
