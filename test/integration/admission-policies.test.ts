// The ValidatingAdmissionPolicies of the default install, enforced by the real
// API server against real identities (ServiceAccount tokens): nobody can point
// banlieue at a Secret they could not read themselves, skip TLS verification
// where no cluster admin allowed it, or write spec.providerID; and the
// controller's identity writes only banlieue's own Secrets.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ALLOW_INSECURE_TLS_LABEL } from '../../infra/install/admission-policies.js';
import { SecretType } from '../../infra/api/well-known.js';
import { banlieueCommand } from '../support/bundles.js';
import { buildTools } from '../support/control-plane.js';
import { apiMessage, createNamespace, testKubeConfig } from '../support/kube.js';
import { waitFor } from '../support/wait.js';

const INSTALL_NS = 'banlieue-system';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; [key: string]: unknown };
  [key: string]: unknown;
}

const provider = (ns: string, connection: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'vcenter', namespace: ns },
  spec: {
    providerClassRef: { name: 'vsphere' },
    connection: { endpoint: 'https://vc.example.com/sdk', credentialsRef: { name: 'creds' }, ...connection },
  },
});

const vsphereMachine = (ns: string, name: string, spec: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: { name, namespace: ns },
  spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, ...spec },
});

const secret = (ns: string, name: string, type: string, extra: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, ...extra },
  type,
  stringData: { value: 'x' },
});

/** Resolves with the API server's refusal, or undefined when admitted. */
async function refusal(attempt: Promise<unknown>): Promise<string | undefined> {
  return attempt.then(
    () => undefined,
    (err: unknown) => apiMessage(err),
  );
}

/** POST `obj` as `api` (dry run unless `persist`): the refusal or undefined. */
async function create(api: KubeApi, obj: Obj, persist = false): Promise<string | undefined> {
  const path = await api.pathOf({ ...obj, metadata: { ...obj.metadata, name: '' } });
  return refusal(api.request('POST', path, { body: obj, ...(persist ? {} : { query: { dryRun: 'All' } }) }));
}

/** JSON merge patch as `api`, dry run. */
async function patch(api: KubeApi, obj: Obj, body: unknown): Promise<string | undefined> {
  return refusal(api.request('PATCH', await api.pathOf(obj), { body, contentType: 'application/merge-patch+json', query: { dryRun: 'All' } }));
}

/** A client acting as ServiceAccount ns/name, with a token the API server issued. */
async function actingAs(admin: KubeConfig, ns: string, name: string): Promise<KubeApi> {
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ name, namespace: ns, body: { spec: { audiences: [] } } });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !token.status?.token) throw new Error(`no token for ${ns}/${name}`);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: token.status.token }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name,
  });
  return new KubeApi(kc);
}

/** Policies load asynchronously after they are applied: wait until this one refuses. */
const refusedEventually = (what: string, attempt: () => Promise<string | undefined>): Promise<string> => waitFor(what, attempt, 60_000);

describe('admission policies of the default install', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  let author: KubeApi;
  let adminApi: KubeApi;
  const admin = testKubeConfig();
  const kubectl = (...args: string[]): Promise<number | null> =>
    new Promise((resolve) => spawn(inject('kubectl'), ['--kubeconfig', inject('kubeconfig'), ...args], { stdio: 'ignore' }).on('close', resolve));

  beforeAll(async () => {
    const [node, command] = await banlieueCommand(['bootstrap', 'operator', '--wait=false', '--kubeconfig', inject('kubeconfig')]);
    const installed = await new Promise<number | null>((resolve) => {
      const child = spawn(node, command, { stdio: 'ignore' });
      child.on('close', resolve);
    });
    expect(installed).toBe(0);
    // CAPI's Machine kind, as CAPI ships it, for the bootstrap-data rule.
    const tools = await buildTools();
    expect(await kubectl('apply', '--server-side', '-f', join(tools.capiModuleDir, 'core/config/crd/bases/cluster.x-k8s.io_machines.yaml'))).toBe(0);
    expect(await kubectl('wait', '--for=condition=Established', '--timeout=60s', 'crd/machines.cluster.x-k8s.io')).toBe(0);

    ns = await createNamespace('admission');
    const core = admin.makeApiClient(CoreV1Api);
    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await core.createNamespacedSecret({ namespace: ns.name, body: { metadata: { name: 'creds' }, stringData: { username: 'u', password: 'p' } } });
    await core.createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'author' } } });
    // A tenant who may write banlieue's kinds (and CAPI Machines) but read no Secret or ConfigMap.
    await rbac.createNamespacedRole({
      namespace: ns.name,
      body: {
        metadata: { name: 'author' },
        rules: [
          {
            apiGroups: ['banlieue.io', 'infrastructure.banlieue.io', 'cluster.x-k8s.io'],
            resources: ['providers', 'virtualmachines', 'vspheremachines', 'vspheremachinetemplates', 'machines'],
            verbs: ['create', 'get', 'update', 'patch'],
          },
        ],
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
    author = await actingAs(admin, ns.name, 'author');
    adminApi = new KubeApi(admin);
    await refusedEventually('the credentials policy to load', () => create(author, provider(ns.name)));
  });

  afterAll(async () => {
    await ns.remove();
    await kubectl('delete', 'crd', 'machines.cluster.x-k8s.io', '--wait=false');
  });

  describe('Secret and ConfigMap references', () => {
    it('refuses a Provider whose credentials Secret the author cannot get', async () => {
      expect(await create(author, provider(ns.name))).toContain('spec.connection.credentialsRef: you may not reference Secret "creds": you cannot get it');
    });

    it('refuses user-data the author cannot get on a VirtualMachine, a VSphereMachine and a VSphereMachineTemplate', async () => {
      const vm = (userData: Record<string, unknown>): Obj => ({
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'vm', namespace: ns.name },
        spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' }, userData },
      });
      expect(await create(author, vm({ secretRef: { name: 'creds' } }))).toContain('spec.userData.secretRef: you may not reference Secret "creds"');
      expect(await create(author, vm({ configMapRef: { name: 'kube-root-ca.crt' } }))).toContain(
        'spec.userData.configMapRef: you may not reference ConfigMap "kube-root-ca.crt"',
      );
      expect(await create(author, vsphereMachine(ns.name, 'vsm', { userDataSecretRef: { name: 'creds' } }))).toContain(
        'spec.userDataSecretRef: you may not reference Secret "creds"',
      );
      const template: Obj = {
        apiVersion: 'infrastructure.banlieue.io/v1alpha1',
        kind: 'VSphereMachineTemplate',
        metadata: { name: 'workers', namespace: ns.name },
        spec: { template: { spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048, userDataSecretRef: { name: 'creds' } } } },
      };
      expect(await create(author, template)).toContain('spec.template.spec.userDataSecretRef: you may not reference Secret "creds"');
      expect(await create(author, vsphereMachine(ns.name, 'vsm'))).toBeUndefined();
    });

    it("refuses a CAPI Machine on banlieue infrastructure whose bootstrap data Secret the author cannot get, and leaves other providers' Machines alone", async () => {
      const machine = (infraGroup: string): Obj => ({
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: 'm1', namespace: ns.name },
        spec: {
          clusterName: 'work',
          bootstrap: { dataSecretName: 'creds' },
          infrastructureRef: { apiGroup: infraGroup, kind: 'VSphereMachine', name: 'm1' },
        },
      });
      const refused = await refusedEventually('the bootstrap-data policy to see the Machine kind', () => create(author, machine('infrastructure.banlieue.io')));
      expect(refused).toContain('spec.bootstrap.dataSecretName: you may not reference Secret "creds"');
      expect(await create(author, machine('infrastructure.cluster.x-k8s.io'))).toBeUndefined();
    });

    it("refuses moving an existing Provider's connection unless the author may get its credentials; other changes pass", async () => {
      expect(await create(adminApi, provider(ns.name), true)).toBeUndefined();
      const live = provider(ns.name);
      expect(await patch(author, live, { spec: { connection: { endpoint: 'https://attacker.example.com/sdk' } } })).toContain(
        'spec.connection.credentialsRef: you may not reference Secret "creds"',
      );
      expect(await patch(author, live, { spec: { paused: true } })).toBeUndefined();
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
      const other = (connection: Record<string, unknown> = {}): Obj => ({
        ...provider(ns.name, connection),
        metadata: { name: 'vcenter-b', namespace: ns.name },
      });
      await waitFor('admission after the grant', async () => (await create(author, other())) === undefined, 60_000);
      // The CA bundle is a reference like any other.
      expect(await create(author, other({ caBundle: { secretRef: { name: 'ca' } } }))).toContain(
        'spec.connection.caBundle.secretRef: you may not reference Secret "ca"',
      );
      expect(await create(author, other({ caBundle: { configMapRef: { name: 'ca' } } }))).toContain(
        'spec.connection.caBundle.configMapRef: you may not reference ConfigMap "ca"',
      );
    });
  });

  describe('insecureSkipTLSVerify', () => {
    it('is refused, to the author and to a cluster admin alike, until a cluster admin labels the namespace', async () => {
      const insecure = {
        ...provider(ns.name, { insecureSkipTLSVerify: true }),
        metadata: { name: 'insecure', namespace: ns.name, annotations: { 'banlieue.io/allow-insecure-tls': 'true' } },
      };
      expect(await create(adminApi, insecure)).toContain(
        `spec.connection.insecureSkipTLSVerify needs namespace "${ns.name}" labelled ${ALLOW_INSECURE_TLS_LABEL}=true`,
      );
      expect(await kubectl('label', 'namespace', ns.name, `${ALLOW_INSECURE_TLS_LABEL}=true`)).toBe(0);
      await waitFor('admission in the labelled namespace', async () => (await create(adminApi, insecure)) === undefined, 60_000);
    });
  });

  describe('spec.providerID', () => {
    it('is refused from a tenant, on create and on update, with a message naming the rule', async () => {
      const claimed = vsphereMachine(ns.name, 'hijack', { providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666' });
      const refused = await refusedEventually('the providerID policy', () => create(author, claimed));
      expect(refused).toContain("spec.providerID of a VSphereMachine is written by banlieue's provider role");
      expect(refused).toContain(`system:serviceaccount:${ns.name}:author may not set or change it (it needs update on vspheremachines/providerid)`);
      expect(await create(author, vsphereMachine(ns.name, 'mine'), true)).toBeUndefined();
      expect(await patch(author, vsphereMachine(ns.name, 'mine'), { spec: { providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666' } })).toContain(
        'may not set or change it',
      );
    });

    it("is refused from the controller's identity, which writes machines but not their identity", async () => {
      const controller = await actingAs(admin, INSTALL_NS, 'banlieue-controller');
      expect(await patch(controller, vsphereMachine(ns.name, 'mine'), { spec: { providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666' } })).toContain(
        'system:serviceaccount:banlieue-system:banlieue-controller may not set or change it',
      );
    });

    it("is admitted from the vsphere provider role's identity", async () => {
      const provider = await actingAs(admin, INSTALL_NS, 'banlieue-provider-vsphere');
      expect(
        await patch(provider, vsphereMachine(ns.name, 'mine'), { spec: { providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666' } }),
      ).toBeUndefined();
    });

    it('is admitted on create from a cluster admin, as clusterctl move creates moved machines', async () => {
      const moved = vsphereMachine(ns.name, 'moved', { providerID: 'vsphere://4211a1b2-1111-2222-3333-777788889999' });
      expect(await create(adminApi, moved)).toBeUndefined();
    });
  });

  describe("a VMImage's per-Provider rows", () => {
    const image = { apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: `rows-${Date.now().toString(36)}` } };
    const hostBinding = `rows-host-a-${Date.now().toString(36)}`;
    const row = (providerName: string): Record<string, unknown> => ({ providerNamespace: ns.name, providerName, ready: true, resolvedRef: 'debian.qcow2' });
    /** A status merge patch setting the image's rows, as `api`, dry run: the refusal or undefined. */
    const writeRows = async (api: KubeApi, rows: Record<string, unknown>[]): Promise<string | undefined> =>
      refusal(
        api.request('PATCH', `${await api.pathOf(image)}/status`, {
          body: { status: { perProvider: rows } },
          contentType: 'application/merge-patch+json',
          query: { dryRun: 'All' },
        }),
      );
    let host: KubeApi;

    beforeAll(async () => {
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      await adminApi.request('POST', await adminApi.pathOf({ ...image, metadata: { name: '' } }), {
        body: {
          ...image,
          spec: {
            osFamily: 'linux',
            osDistribution: 'debian',
            osVersion: '12',
            architecture: 'amd64',
            sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'debian' }],
          },
        },
      });
      // A Cloud Hypervisor host's identity, as `banlieue host install` binds it: its own Provider's status, every image's rows.
      await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccount({ namespace: ns.name, body: { metadata: { name: 'host-a' } } });
      await rbac.createNamespacedRole({
        namespace: ns.name,
        body: {
          metadata: { name: 'host-a' },
          rules: [{ apiGroups: ['banlieue.io'], resources: ['providers/status'], verbs: ['get', 'update', 'patch'], resourceNames: ['host-a'] }],
        },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns.name,
        body: {
          metadata: { name: 'host-a' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'host-a' },
          subjects: [{ kind: 'ServiceAccount', name: 'host-a', namespace: ns.name }],
        },
      });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: hostBinding },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'banlieue-provider-cloud-hypervisor-images' },
          subjects: [{ kind: 'ServiceAccount', name: 'host-a', namespace: ns.name }],
        },
      });
      host = await actingAs(admin, ns.name, 'host-a');
    });
    afterAll(async () => {
      await adminApi.request('DELETE', await adminApi.pathOf(image));
      await admin.makeApiClient(RbacAuthorizationV1Api).deleteClusterRoleBinding({ name: hostBinding });
    });

    it("are refused from a host's identity for another host's Provider, naming the rows", async () => {
      const refused = await refusedEventually('the image rows policy', () => writeRows(host, [row('host-b')]));
      expect(refused).toContain("status.perProvider: a row is written only by who may update its Provider's status");
      expect(refused).toContain(`system:serviceaccount:${ns.name}:host-a writes the rows of ${ns.name}/host-b`);
    });

    it("are admitted from a host's identity for its own Provider, and from an in-cluster provider role for any", async () => {
      expect(await writeRows(host, [row('host-a')])).toBeUndefined();
      expect(await writeRows(await actingAs(admin, INSTALL_NS, 'banlieue-provider-libvirt'), [row('host-b')])).toBeUndefined();
    });
  });

  describe("the controller's Secret writes", () => {
    let controller: KubeApi;
    beforeAll(async () => {
      controller = await actingAs(admin, INSTALL_NS, 'banlieue-controller');
    });

    it(`admits a ${SecretType.userData} Secret in a tenant namespace`, async () => {
      expect(await create(controller, secret(ns.name, 'vm-user-data', SecretType.userData))).toBeUndefined();
    });

    it('refuses any other type, and changing a Secret it does not own', async () => {
      expect(await create(controller, secret(ns.name, 'opaque', 'Opaque'))).toContain(`may write only Secrets of type ${SecretType.userData}`);
      expect(await patch(controller, secret(ns.name, 'creds', 'Opaque'), { stringData: { password: 'taken' } })).toContain(
        `may write only Secrets of type ${SecretType.userData}`,
      );
    });

    it('refuses a Secret in kube-system, even of its own type', async () => {
      expect(await create(controller, secret('kube-system', 'planted', SecretType.userData), true)).toContain('may not write Secrets in kube-* namespaces');
    });

    it('refuses to mint a ServiceAccount token, and none exists afterwards', async () => {
      const token = secret(ns.name, 'minted', 'kubernetes.io/service-account-token', { annotations: { 'kubernetes.io/service-account.name': 'default' } });
      expect(await create(controller, token, true)).toContain('may not write ServiceAccount token Secrets');
      const live = await refusal(adminApi.get(token));
      expect(live).toContain('not found');
    });
  });
});
