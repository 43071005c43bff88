// The optional ValidatingAdmissionPolicies, enforced by the real API server:
// nobody can point banlieue at a Secret they could not read themselves.
import { spawn } from 'node:child_process';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { apiMessage, createNamespace, testKubeConfig } from '../support/kube.js';

const provider = (ns: string, extra: Record<string, unknown> = {}, annotations?: Record<string, string>) => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'vcenter', namespace: ns, ...(annotations ? { annotations } : {}) },
  spec: {
    providerClassRef: { name: 'vsphere' },
    connection: { endpoint: 'https://vc.example.com/sdk', credentialsRef: { name: 'creds' }, ...extra },
  },
});

/** Dry-run create as `api`; resolves with the denial message, or undefined when admitted. */
async function denial(api: KubeApi, obj: { apiVersion: string; kind: string; metadata: { name: string; namespace: string } }): Promise<string | undefined> {
  const path = await api.pathOf({ ...obj, metadata: { ...obj.metadata, name: '' } });
  return api.request('POST', path, { query: { dryRun: 'All' }, body: obj }).then(
    () => undefined,
    (err: unknown) => apiMessage(err),
  );
}

/** Policies take a moment to load; wait until one decides as expected. */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not observed within 60s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe('admission policies', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  let author: KubeApi;
  const admin = testKubeConfig();

  beforeAll(async () => {
    const installed = await new Promise<number | null>((resolve) => {
      const child = spawn('npx', ['tsx', 'controller/cli/run.ts', 'bootstrap', 'operator', '--admission-policies', '--kubeconfig', inject('kubeconfig')], { stdio: 'ignore' });
      child.on('close', resolve);
    });
    expect(installed).toBe(0);
    ns = await createNamespace('admission');
    const core = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedSecret({ namespace: ns.name, body: { metadata: { name: 'creds' }, stringData: { username: 'u', password: 'p' } } });
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'author' } } });
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'author' },
        rules: [{ apiGroups: ['banlieue.io', 'infrastructure.banlieue.io'], resources: ['providers', 'virtualmachines', 'vspheremachines'], verbs: ['create', 'get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'author' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'author' },
        subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns.name }],
      },
    });
    const token = await core.createNamespacedServiceAccountToken({ name: 'author', namespace: ns.name, body: { spec: { audiences: [] } } });
    const cluster = admin.getCurrentCluster();
    if (!cluster || !token.status?.token) throw new Error('no token');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'author', token: token.status.token }],
      contexts: [{ name: 'author', cluster: cluster.name, user: 'author' }],
      currentContext: 'author',
    });
    author = new KubeApi(kc);
  });

  afterAll(async () => {
    await ns.remove();
  });

  it('refuses a Provider whose credentials Secret the author cannot get', async () => {
    await eventually(async () => (await denial(author, provider(ns.name))) !== undefined, 'the credentials policy');
    expect(await denial(author, provider(ns.name))).toContain('you may not reference a credentials Secret you cannot get');
  });

  it('refuses a VirtualMachine or VSphereMachine whose user-data Secret the author cannot get', async () => {
    const vm = {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VirtualMachine',
      metadata: { name: 'vm', namespace: ns.name },
      spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' }, userData: { secretRef: { name: 'creds' } } },
    };
    await eventually(async () => (await denial(author, vm)) !== undefined, 'the VM user-data policy');
    expect(await denial(author, vm)).toContain('you may not reference a user-data Secret you cannot get');
    const machine = {
      apiVersion: 'infrastructure.banlieue.io/v1alpha1',
      kind: 'VSphereMachine',
      metadata: { name: 'vsm', namespace: ns.name },
      spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, userDataSecretRef: { name: 'creds' } },
    };
    await eventually(async () => (await denial(author, machine)) !== undefined, 'the machine user-data policy');
    expect(await denial(author, machine)).toContain('you may not reference a user-data Secret you cannot get');
  });

  it('admits the same Provider once the author may get that one Secret', async () => {
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: { metadata: { name: 'read-creds' }, rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['creds'], verbs: ['get'] }] },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns.name,
      body: {
        metadata: { name: 'read-creds' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read-creds' },
        subjects: [{ kind: 'ServiceAccount', name: 'author', namespace: ns.name }],
      },
    });
    await eventually(async () => (await denial(author, provider(ns.name))) === undefined, 'admission after the grant');
  });

  it('refuses insecureSkipTLSVerify unless the Provider is annotated to allow it', async () => {
    const insecure = provider(ns.name, { insecureSkipTLSVerify: true });
    await eventually(async () => (await denial(author, insecure)) !== undefined, 'the insecure-TLS policy');
    expect(await denial(author, insecure)).toContain('insecureSkipTLSVerify needs the annotation banlieue.io/allow-insecure-tls');
    expect(await denial(author, provider(ns.name, { insecureSkipTLSVerify: true }, { 'banlieue.io/allow-insecure-tls': 'true' }))).toBeUndefined();
  });
});
