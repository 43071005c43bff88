// What each identity of the default install may do, as the real API server's
// authorizer answers (SubjectAccessReview): every ServiceAccount we ship, and
// CAPI's manager through its aggregated role. The expected grants are written
// out here by hand, not derived from infra/install/rbac-rules.ts, and every
// other (verb, resource, namespace) of a broad universe must be denied: a rule
// widened in the install fails this test.
import { spawn } from 'node:child_process';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ApiStatusError, KubeApi } from '../../controller/runtime/kube-api.js';
import { BACKEND_APIS } from '../../infra/api/backends.js';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { SecretType } from '../../infra/api/well-known.js';
import { banlieueCommand } from '../support/bundles.js';
import { apiMessage, createNamespace, testKubeConfig } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const INSTALL_NS = 'banlieue-system';
const TENANT_NS = 'tenant-a';
const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
/** The backends' resource prefixes (plural of the kind, lower-cased). */
const BACKENDS = ['vsphere', 'proxmox', 'libvirt', 'cloudhypervisor'] as const;

interface Resource {
  readonly group: string;
  /** `plural` or `plural/subresource`. */
  readonly resource: string;
  readonly namespaced: boolean;
  /** Verbs beyond VERBS that matter for this resource (bind, escalate, impersonate). */
  readonly extraVerbs?: readonly string[];
}

/** Every banlieue resource and subresource, and the Kubernetes ones an attacker wants. */
const UNIVERSE: readonly Resource[] = [
  ...ALL_KINDS.flatMap((k) =>
    ['', '/status', '/finalizers', ...(k.group === 'infrastructure.banlieue.io' ? ['/providerid'] : [])].map((sub) => ({
      group: k.group,
      resource: `${k.plural}${sub}`,
      namespaced: k.scope === 'Namespaced',
    })),
  ),
  ...['secrets', 'configmaps', 'serviceaccounts/token', 'pods', 'pods/exec', 'events', 'persistentvolumeclaims', 'services'].map((resource) => ({
    group: '',
    resource,
    namespaced: true,
  })),
  ...['namespaces', 'nodes', 'persistentvolumes'].map((resource) => ({ group: '', resource, namespaced: false })),
  ...['users', 'groups'].map((resource) => ({ group: '', resource, namespaced: false, extraVerbs: ['impersonate'] })),
  { group: '', resource: 'serviceaccounts', namespaced: true, extraVerbs: ['impersonate'] },
  { group: 'events.k8s.io', resource: 'events', namespaced: true },
  { group: 'coordination.k8s.io', resource: 'leases', namespaced: true },
  { group: 'apps', resource: 'deployments', namespaced: true },
  { group: 'rbac.authorization.k8s.io', resource: 'roles', namespaced: true, extraVerbs: ['bind', 'escalate'] },
  { group: 'rbac.authorization.k8s.io', resource: 'rolebindings', namespaced: true },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespaced: false, extraVerbs: ['bind', 'escalate'] },
  { group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings', namespaced: false },
  { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicies', namespaced: false },
  { group: 'admissionregistration.k8s.io', resource: 'validatingadmissionpolicybindings', namespaced: false },
  { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', namespaced: false },
  { group: 'cluster.x-k8s.io', resource: 'clusters', namespaced: true },
  { group: 'cluster.x-k8s.io', resource: 'machines', namespaced: true },
];

/** What an identity is granted: these verbs on these resources of a group, in these namespaces (all when unset). */
interface Grant {
  readonly group: string;
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly namespaces?: readonly string[];
}

const READ = ['get', 'list', 'watch'];
const STATUS_WRITE = ['get', 'update', 'patch'];
const SEVEN = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const INFRA = 'infrastructure.banlieue.io';
const perBackend = (...suffixes: string[]): string[] => BACKENDS.flatMap((b) => suffixes.map((s) => `${b}${s}`));
const events: Grant[] = [
  { group: '', resources: ['events'], verbs: ['create', 'patch'] },
  { group: 'events.k8s.io', resources: ['events'], verbs: ['create', 'patch'] },
];
const leases: Grant = { group: 'coordination.k8s.io', resources: ['leases'], verbs: ['get', 'create', 'update', 'patch'], namespaces: [INSTALL_NS] };

const CONTROLLER: readonly Grant[] = [
  { group: 'banlieue.io', resources: ['virtualmachines'], verbs: [...READ, 'update', 'patch'] },
  { group: 'banlieue.io', resources: ['virtualmachines/status', 'vmimages/status'], verbs: STATUS_WRITE },
  // Ready=False NoProviderRole on a Provider no role serves.
  { group: 'banlieue.io', resources: ['providers/status'], verbs: STATUS_WRITE },
  { group: 'banlieue.io', resources: ['virtualmachines/finalizers'], verbs: ['update'] },
  { group: 'banlieue.io', resources: ['providers', 'vmclasses', 'vmimages'], verbs: READ },
  { group: INFRA, resources: perBackend('machines'), verbs: SEVEN },
  { group: INFRA, resources: perBackend('clusters'), verbs: [...READ, 'update', 'patch'] },
  { group: INFRA, resources: perBackend('clusters/status'), verbs: STATUS_WRITE },
  // Machine templates' status.capacity and nodeInfo (autoscaling from zero).
  { group: INFRA, resources: perBackend('machinetemplates'), verbs: READ },
  { group: INFRA, resources: perBackend('machinetemplates/status'), verbs: STATUS_WRITE },
  // Never list or watch: Secrets are read by name. create/patch: narrowed by the admission guard below.
  { group: '', resources: ['secrets'], verbs: ['get', 'create', 'patch'] },
  { group: '', resources: ['configmaps'], verbs: ['get'] },
  { group: 'cluster.x-k8s.io', resources: ['clusters', 'machines'], verbs: ['get'] },
  ...events,
  // Its own Lease, and whether the provider roles hold theirs (list, watch): in the install namespace only.
  { ...leases, verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
];

/** A provider role run in the cluster: its machine kind (`plural`) and its providerID, credentials by name. */
const providerGrants = (plural: string): readonly Grant[] => [
  { group: 'banlieue.io', resources: ['providers', 'vmimages'], verbs: READ },
  { group: 'banlieue.io', resources: ['providers/status', 'vmimages/status'], verbs: STATUS_WRITE },
  // Its finalizer on the Providers it serves (ADR 19).
  { group: 'banlieue.io', resources: ['providers'], verbs: ['patch'] },
  { group: INFRA, resources: [plural], verbs: [...READ, 'update', 'patch'] },
  { group: INFRA, resources: [`${plural}/status`], verbs: STATUS_WRITE },
  { group: INFRA, resources: [`${plural}/finalizers`, `${plural}/providerid`], verbs: ['update'] },
  { group: 'cluster.x-k8s.io', resources: ['clusters', 'machines'], verbs: ['get'] },
  // Every namespace by default (providerNamespaces unset); by name only.
  { group: '', resources: ['secrets', 'configmaps'], verbs: ['get'] },
  ...events,
  leases,
];
const VSPHERE_PROVIDER = providerGrants('vspheremachines');

/** banlieue-capi-infrastructure, as CAPI's aggregated manager role receives it: our infrastructure kinds, nothing else of ours. */
const CAPI_AGGREGATED: readonly Grant[] = [
  {
    group: INFRA,
    resources: perBackend('machines', 'machines/status', 'machinetemplates', 'machinetemplates/status', 'clusters', 'clusters/status', 'clustertemplates'),
    verbs: SEVEN,
  },
];

const NOTHING: readonly Grant[] = [];

interface Case {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** '' for a cluster-scoped resource or a request across all namespaces. */
  readonly namespace: string;
}

/**
 * Where to ask about a resource: a tenant namespace, the install namespace
 * (where the install has Roles), all namespaces at once and, for the core
 * group, kube-system.
 */
const namespacesOf = (r: Resource): string[] => (r.namespaced ? [TENANT_NS, INSTALL_NS, '', ...(r.group === '' ? ['kube-system'] : [])] : ['']);

function casesOf(): Case[] {
  return UNIVERSE.flatMap((r) =>
    namespacesOf(r).flatMap((namespace) => [...VERBS, ...(r.extraVerbs ?? [])].map((verb) => ({ verb, group: r.group, resource: r.resource, namespace }))),
  );
}

function expected(grants: readonly Grant[], c: Case): boolean {
  return grants.some(
    (g) => g.group === c.group && g.resources.includes(c.resource) && g.verbs.includes(c.verb) && (!g.namespaces || g.namespaces.includes(c.namespace)),
  );
}

const describeCase = (c: Case): string => `${c.verb} ${c.group ? `${c.group}/` : ''}${c.resource}${c.namespace ? ` in ${c.namespace}` : ' (cluster-wide)'}`;

/** Ask the authorizer about every case for `user`; the cases it answered differently from `grants`. */
async function mismatches(
  api: KubeApi,
  user: { name: string; groups: string[] },
  grants: readonly Grant[],
  only: (c: Case) => boolean = () => true,
): Promise<string[]> {
  const cases = casesOf().filter(only);
  const wrong: string[] = [];
  const ask = async (c: Case): Promise<void> => {
    const [resource = '', subresource] = c.resource.split('/');
    const review = await api.request<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.name,
          groups: user.groups,
          resourceAttributes: {
            verb: c.verb,
            group: c.group,
            resource,
            ...(subresource ? { subresource } : {}),
            ...(c.namespace ? { namespace: c.namespace } : {}),
          },
        },
      },
    });
    const allowed = review.status?.allowed === true;
    const want = expected(grants, c);
    if (allowed !== want) wrong.push(`${describeCase(c)}: expected ${want ? 'allowed' : 'denied'}, the API server says ${allowed ? 'allowed' : 'denied'}`);
  };
  // A few dozen reviews in flight: quick, and gentle on one test apiserver.
  for (let i = 0; i < cases.length; i += 48) await Promise.all(cases.slice(i, i + 48).map(ask));
  return wrong.sort();
}

const serviceAccount = (ns: string, name: string): { name: string; groups: string[] } => ({
  name: `system:serviceaccount:${ns}:${name}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
});

describe('RBAC matrix of the default install', () => {
  const admin = testKubeConfig();
  const api = new KubeApi(admin);
  let capiNs: Awaited<ReturnType<typeof createNamespace>>;
  const aggregated = 'rbac-matrix-capi-aggregated-manager';

  beforeAll(async () => {
    const [node, command] = await banlieueCommand(['bootstrap', 'operator', '--wait=false', '--kubeconfig', inject('kubeconfig')]);
    const installed = await new Promise<number | null>((resolve) => {
      spawn(node, command, { stdio: 'ignore' }).on('close', resolve);
    });
    expect(installed).toBe(0);
    // CAPI's manager identity as its release sets it up: bound to a role aggregating every
    // ClusterRole labelled cluster.x-k8s.io/aggregate-to-manager (here only banlieue's).
    capiNs = await createNamespace('capi-system');
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: capiNs.name, body: { metadata: { name: 'capi-manager' } } });
    await rbac.createClusterRole({
      body: {
        metadata: { name: aggregated },
        aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'cluster.x-k8s.io/aggregate-to-manager': 'true' } }] },
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: aggregated },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: aggregated },
        subjects: [{ kind: 'ServiceAccount', name: 'capi-manager', namespace: capiNs.name }],
      },
    });
    await waitFor(
      'the aggregation controller to fill the CAPI manager role',
      async () => ((await rbac.readClusterRole({ name: aggregated })).rules ?? []).length > 0 || undefined,
      60_000,
    );
  });

  afterAll(async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.deleteClusterRoleBinding({ name: aggregated });
    await rbac.deleteClusterRole({ name: aggregated });
    await capiNs.remove();
  });

  it('grants the controller exactly its rules: Secrets by name and written, never listed; no CAPI, RBAC or token powers', async () => {
    expect(await mismatches(api, serviceAccount(INSTALL_NS, 'banlieue-controller'), CONTROLLER)).toEqual([]);
  });

  it('grants the vsphere provider exactly its rules: its machine kind and its providerID, credentials by name, no VirtualMachines', async () => {
    expect(await mismatches(api, serviceAccount(INSTALL_NS, 'banlieue-provider-vsphere'), VSPHERE_PROVIDER)).toEqual([]);
  });

  it("grants CAPI's aggregated manager role full access to the infrastructure kinds and nothing of banlieue's core kinds, Secrets or providerID", async () => {
    expect(await mismatches(api, serviceAccount(capiNs.name, 'capi-manager'), CAPI_AGGREGATED)).toEqual([]);
  });

  const clusterSideBuilt = BACKEND_APIS.filter((b) => b.providerRoleBuilt && b.providerRuns === 'cluster' && b.name !== 'vsphere');
  it.each(clusterSideBuilt.map((b) => [b.name, b.machine.plural]))(
    'grants the %s provider exactly its rules: its machine kind (%s) and its providerID, credentials by name, no VirtualMachines',
    async (backend, plural) => {
      expect(await mismatches(api, serviceAccount(INSTALL_NS, `banlieue-provider-${backend}`), providerGrants(plural))).toEqual([]);
    },
  );

  it('gives the cloud-hypervisor provider, which runs on its hosts, no identity in the install: its ClusterRoles are bound per host', async () => {
    const name = 'banlieue-provider-cloud-hypervisor';
    const rbac = 'rbac.authorization.k8s.io/v1';
    const gone = async (get: Promise<unknown>): Promise<string> =>
      get.then(
        () => 'present',
        (err: unknown) => (err instanceof ApiStatusError && err.code === 404 ? 'absent' : apiMessage(err)),
      );
    expect(await gone(api.get({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: INSTALL_NS } }))).toBe('absent');
    expect(await gone(api.get({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name } }))).toBe('present');
    expect(await gone(api.get({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name } }))).toBe('absent');
    expect(await mismatches(api, serviceAccount(INSTALL_NS, name), NOTHING, (c) => c.group === '' && c.resource === 'secrets')).toEqual([]);
  });

  const unbuilt = BACKEND_APIS.filter((b) => !b.providerRoleBuilt).map((b) => b.name);
  it.skipIf(unbuilt.length === 0).each(unbuilt)('ships no identity for the %s provider, whose role this version does not run', async (backend) => {
    const name = `banlieue-provider-${backend}`;
    const gone = async (get: Promise<unknown>): Promise<string> =>
      get.then(
        () => 'present',
        (err: unknown) => (err instanceof ApiStatusError && err.code === 404 ? 'absent' : apiMessage(err)),
      );
    const rbac = 'rbac.authorization.k8s.io/v1';
    expect(await gone(api.get({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: INSTALL_NS } }))).toBe('absent');
    expect(await gone(api.get({ apiVersion: rbac, kind: 'ClusterRole', metadata: { name } }))).toBe('absent');
    expect(await gone(api.get({ apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name } }))).toBe('absent');
    expect(await gone(api.get({ apiVersion: rbac, kind: 'RoleBinding', metadata: { name: `${name}-leader-election`, namespace: INSTALL_NS } }))).toBe('absent');
    expect(await mismatches(api, serviceAccount(INSTALL_NS, name), NOTHING, (c) => c.group === '' && c.resource === 'secrets')).toEqual([]);
  });

  describe('where RBAC allows and admission narrows: acting as the controller', () => {
    let controller: KubeApi;
    beforeAll(async () => {
      const token = await admin
        .makeApiClient(CoreV1Api)
        .createNamespacedServiceAccountToken({ name: 'banlieue-controller', namespace: INSTALL_NS, body: { spec: { audiences: [] } } });
      const cluster = admin.getCurrentCluster();
      if (!cluster || !token.status?.token) throw new Error('no controller token');
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [cluster],
        users: [{ name: 'controller', token: token.status.token }],
        contexts: [{ name: 'controller', cluster: cluster.name, user: 'controller' }],
        currentContext: 'controller',
      });
      controller = new KubeApi(kc);
    });

    /** POST a Secret as the controller: 'created', or the API server's refusal. */
    const attempt = async (obj: { metadata: { namespace: string } } & Record<string, unknown>, dryRun = false): Promise<string> =>
      controller.request('POST', `/api/v1/namespaces/${obj.metadata.namespace}/secrets`, { body: obj, ...(dryRun ? { query: { dryRun: 'All' } } : {}) }).then(
        () => 'created',
        (err: unknown) => apiMessage(err),
      );

    it('cannot plant a Secret in kube-system, even of its own type', async () => {
      const planted = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'rbac-matrix-planted', namespace: 'kube-system' },
        type: SecretType.userData,
        stringData: { value: 'x' },
      };
      // The guard loads asynchronously after the install: wait (by dry runs) until it answers.
      await waitFor('the controller Secret guard to load', async () => (await attempt(planted, true)) !== 'created' || undefined, 60_000);
      expect(await attempt(planted)).toContain('may not write Secrets in kube-* namespaces');
    });

    it('cannot mint a ServiceAccount token for any ServiceAccount', async () => {
      const token = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'rbac-matrix-token', namespace: INSTALL_NS, annotations: { 'kubernetes.io/service-account.name': 'banlieue-provider-vsphere' } },
        type: 'kubernetes.io/service-account-token',
      };
      expect(await attempt(token)).toContain('may not write ServiceAccount token Secrets');
    });

    it("writes the rules of a namespace's host-reads Role (get on named Secrets), and creates or changes no other Role", async () => {
      const ns = await createNamespace('rbac-matrix-hosts');
      try {
        const roles = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/roles`;
        const role = (name: string) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns.name } });
        for (const name of ['banlieue-cloud-hypervisor-host-reads', 'someone-elses']) await api.request('POST', roles, { body: role(name) });
        const grant = { rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['vm-1-user-data'] }] };
        const patch = (name: string): Promise<string> =>
          controller.request('PATCH', `${roles}/${name}`, { body: grant, contentType: 'application/merge-patch+json' }).then(
            () => 'patched',
            (err: unknown) => apiMessage(err),
          );
        expect(await patch('banlieue-cloud-hypervisor-host-reads')).toBe('patched');
        expect(await patch('someone-elses')).toMatch(/forbidden/);
        const created = await controller.request('POST', roles, { body: role('banlieue-made-up') }).then(
          () => 'created',
          (err: unknown) => apiMessage(err),
        );
        expect(created).toMatch(/forbidden/);
      } finally {
        await ns.remove();
      }
    });
  });
});
