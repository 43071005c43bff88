import { BACKENDS } from '../../../infra/api/backends.js';
import { describe, expect, it } from 'vitest';
import { BACKEND_APIS } from '../../../infra/api/backends.js';
import { Label } from '../../../infra/api/well-known.js';
import { HostRoleRules } from '../../../infra/install/host-role-rules.js';
import { CLUSTER_SIDE_BACKENDS, PROVIDER_ROLES_BUILT } from '../../../infra/install/install-props.js';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';

const objects = renderInstall({ networkPolicies: true }).flatMap((c) => c.objects);
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
  it('aggregates banlieue-capi-infrastructure into the CAPI manager with exactly the infrastructure kinds, and the pools of the machines it clones', () => {
    const role = clusterRole('banlieue-capi-infrastructure');
    expect(role.metadata.labels?.[Label.capiAggregateToManager]).toBe('true');
    // Each backend's kind prefix, lower-cased: vsphere, proxmox, libvirt, cloudhypervisor, and any backend added since.
    const backends = BACKEND_APIS.map((b) => b.machine.kind.replace(/Machine$/, '').toLowerCase());
    expect(backends).toEqual(expect.arrayContaining(['vsphere', 'proxmox', 'libvirt', 'cloudhypervisor']));
    const expected = backends
      .flatMap((b) => [
        `${b}machines`,
        `${b}machines/status`,
        `${b}machinetemplates`,
        `${b}machinetemplates/status`,
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
      { apiGroups: ['infrastructure.banlieue.io'], resources: backends.map((b) => `${b}machines/ippools`).sort(), verbs: ['use'] },
    ]);
  });

  it('does not aggregate banlieue-controller into anything', () => {
    const role = clusterRole('banlieue-controller');
    expect(Object.keys(role.metadata.labels ?? {}).filter((l) => l.includes('aggregate'))).toEqual([]);
    expect(role).not.toHaveProperty('aggregationRule');
  });

  it('never grants list or watch on Secrets, and no wildcards, in any role', () => {
    const scoped = renderInstall({ providerNamespaces: ['vms'] }).flatMap((c) => c.objects);
    const roles = [...objects, ...scoped].filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
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

  it('lets provider roles create, read and delete IPAddressClaims and read IPAddresses by name, never list or watch them', () => {
    for (const backend of ['vsphere', 'proxmox', 'libvirt']) {
      const ipam = rulesOf(clusterRole(`banlieue-provider-${backend}`)).filter((r) => r.apiGroups.includes('ipam.cluster.x-k8s.io'));
      expect(ipam).toEqual([
        { apiGroups: ['ipam.cluster.x-k8s.io'], resources: ['ipaddressclaims'], verbs: ['get', 'create', 'patch', 'delete'] },
        { apiGroups: ['ipam.cluster.x-k8s.io'], resources: ['ipaddresses'], verbs: ['get'] },
      ]);
    }
  });

  it('lets only the provider role update the providerid virtual subresource its admission policy checks', () => {
    const holders = objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .filter((o) => rulesOf(o).some((r) => r.resources.some((res) => res.endsWith('/providerid'))))
      .map((o) => o.metadata.name);
    expect(holders.sort()).toEqual(PROVIDER_ROLES_BUILT.map((b) => `banlieue-provider-${b}`).sort());
    for (const backend of PROVIDER_ROLES_BUILT) {
      const plural = BACKEND_APIS.find((b) => b.name === backend)?.machine.plural ?? '';
      expect(rulesOf(clusterRole(`banlieue-provider-${backend}`))).toContainEqual({
        apiGroups: ['infrastructure.banlieue.io'],
        resources: [`${plural}/providerid`],
        verbs: ['update'],
      });
    }
  });

  it('lets the controller get, create and patch Secrets (the guard narrows the writes) and only get ConfigMaps', () => {
    const rules = rulesOf(clusterRole('banlieue-controller'));
    expect(rules.filter((r) => r.resources.includes('secrets'))).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'patch'] }]);
    expect(rules.filter((r) => r.resources.includes('configmaps'))).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }]);
  });

  it("gives a host's ClusterRole no Secret or ConfigMap, and the controller only the host-reads Roles to write", () => {
    const host = rulesOf(clusterRole('banlieue-provider-cloud-hypervisor')).flatMap((r) => r.resources);
    expect(host).not.toContain('secrets');
    expect(host).not.toContain('configmaps');
    expect(rulesOf(clusterRole('banlieue-controller')).filter((r) => r.apiGroups.includes('rbac.authorization.k8s.io'))).toEqual([
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['roles'],
        verbs: ['get', 'update', 'patch'],
        resourceNames: ['banlieue-cloud-hypervisor-host-reads'],
      },
    ]);
  });

  it('gives provider roles Secret and ConfigMap get in every namespace by default', () => {
    expect(rulesOf(clusterRole('banlieue-provider-vsphere'))).toContainEqual({ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get'] });
  });

  it('gives provider roles Secret and ConfigMap get only in the providerNamespaces when set, by a Role and RoleBinding in each', () => {
    const scoped = renderInstall({ providerNamespaces: ['vms-a', 'vms-b'] }).flatMap((c) => c.objects);
    const role = scoped.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'banlieue-provider-vsphere');
    expect(role && rulesOf(role).flatMap((r) => r.resources)).not.toContain('secrets');
    expect(role && rulesOf(role).flatMap((r) => r.resources)).not.toContain('configmaps');
    for (const ns of ['vms-a', 'vms-b']) {
      const nsRole = scoped.find((o) => o.kind === 'Role' && o.metadata.namespace === ns);
      expect(nsRole?.metadata.name).toBe('banlieue-provider-vsphere-credentials');
      expect(nsRole && rulesOf(nsRole)).toEqual([{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get'] }]);
      const binding = scoped.find((o) => o.kind === 'RoleBinding' && o.metadata.namespace === ns);
      expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'banlieue-provider-vsphere-credentials' });
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'banlieue-provider-vsphere', namespace: 'banlieue-system' }]);
    }
    // The controller still reads user-data wherever VirtualMachines are.
    const controller = scoped.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'banlieue-controller');
    expect(controller && rulesOf(controller).flatMap((r) => r.resources)).toContain('secrets');
  });

  it('binds every ClusterRole except the CAPI one and those of roles run on hosts (bound per host) to the ServiceAccount of the same name', () => {
    const perHost = BACKENDS.filter((b) => !CLUSTER_SIDE_BACKENDS.includes(b)).flatMap((b) => Object.values(HostRoleRules.namesOf(b)));
    for (const role of objects.filter(
      (o) => o.kind === 'ClusterRole' && o.metadata.name !== 'banlieue-capi-infrastructure' && !perHost.includes(o.metadata.name),
    )) {
      const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === role.metadata.name);
      expect(binding, role.metadata.name).toBeDefined();
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: role.metadata.name, namespace: 'banlieue-system' }]);
    }
  });
});
