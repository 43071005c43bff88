// What a tenant reaches beyond its namespace through banlieue, tried on the default install
// (admission policies on) as a hostile tenant would: a Provider the provider pods would dial over
// libvirt's unauthenticated, unencrypted TCP transport; an IPAM pool the tenant may not get (the
// cluster-scoped one an admin's machines draw from, another team's); and, as anyone who reads
// VMImages, the credentials of a download URL. The tenant is a ServiceAccount with a real token and
// a user impersonated with --as/--as-group (test/support/tenant.ts); requests go through kubectl.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VMImage } from '../../infra/api/banlieue.io/v1alpha1/vm-image.js';
import { cloudHypervisorApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { FieldManager } from '../../infra/api/well-known.js';
import { cloudHypervisorBackend } from '../../controller/backends/cloud-hypervisor/ch-backend.js';
import type { RunningBackend } from '../../controller/backends/descriptor.js';
import { ImageRowsReconciler } from '../../controller/reconcilers/image-rows/reconciler.js';
import { Informer } from '../../controller/runtime/informer.js';
import { silentLogger } from '../../controller/runtime/log.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { urlImageHost } from '../support/cloud-hypervisor/url-image-host.js';
import { CORE, INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { Actor, clusterAdmin, createTenant, impersonated, installDefault, kubectlAs, type Tenant } from '../support/tenant.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const admin = new Actor(clusterAdmin);
const IPAM = 'ipam.cluster.x-k8s.io';
const RBAC = 'rbac.authorization.k8s.io/v1';
const INSECURE_TRANSPORT_LABEL = 'banlieue.io/allow-insecure-transport';

describe("what a tenant reaches beyond its namespace (default install, the tenant's ServiceAccount and user)", () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  let tenant: Tenant;

  const provider = (name: string, endpoint: string): Obj => ({
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name, namespace: ns.name },
    spec: { providerClassRef: { name: 'libvirt' }, connection: { endpoint, credentialsRef: { name: 'libvirt-client' } } },
  });

  const pool = (kind: string, name: string): Record<string, string> => ({ apiGroup: IPAM, kind, name });
  const machineSpec = (pools: Record<string, string>[]): Record<string, unknown> => ({
    template: 'ubuntu',
    numCpus: 1,
    memoryMiB: 512,
    network: [{ name: 'eth0', portGroup: 'VM Network', ipam: { addressesFromPools: pools } }],
  });
  const machine = (name: string, pools: Record<string, string>[]): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachine',
    metadata: { name, namespace: ns.name },
    spec: machineSpec(pools),
  });
  const template = (name: string, pools: Record<string, string>[]): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachineTemplate',
    metadata: { name, namespace: ns.name },
    spec: { template: { spec: machineSpec(pools) } },
  });

  /** A Role (or ClusterRole, `namespace` undefined) with `rule`, bound to the tenant's ServiceAccount and group. */
  async function grant(name: string, rule: Record<string, string[]>, namespace: string | undefined): Promise<void> {
    const scope = namespace ? { namespace } : {};
    const kind = namespace ? 'Role' : 'ClusterRole';
    const subjects = [
      { kind: 'ServiceAccount', name: 'tenant', namespace: ns.name },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `tenants:${ns.name}` },
    ];
    await t.apply({ apiVersion: RBAC, kind, metadata: { name, ...scope }, rules: [rule] } as Obj);
    await t.apply({
      apiVersion: RBAC,
      kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
      metadata: { name, ...scope },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
      subjects,
    } as Obj);
  }

  /** `get` on the pools named, of one resource: in `namespace`, or cluster-wide. */
  const grantPools = (name: string, resource: string, names: string[], namespace: string | undefined): Promise<void> =>
    grant(name, { apiGroups: [IPAM], resources: [resource], resourceNames: names, verbs: ['get'] }, namespace);

  beforeAll(async () => {
    await installDefault();
    ns = await createNamespace('reach');
    tenant = await createTenant(ns.name);
    // The credentials of the tenant's libvirt Providers: a Secret the tenant may read, so the reference policy lets them name it.
    await t.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'libvirt-client', namespace: ns.name },
      stringData: { 'tls.crt': 'x', 'tls.key': 'x' },
    } as Obj);
    await grant('libvirt-client', { apiGroups: [''], resources: ['secrets'], resourceNames: ['libvirt-client'], verbs: ['get'] }, ns.name);
    // Policies load asynchronously after they are applied.
    const probe = { ...machine('probe', []), spec: { template: 'ubuntu', numCpus: 1, memoryMiB: 512, userDataSecretRef: { name: 'unreadable' } } };
    await waitFor('the admission policies to load', async () => (await tenant.serviceAccount.create(probe, { dryRun: true })) !== undefined, 60_000);
  });

  afterAll(async () => {
    await kubectlAs(clusterAdmin, ['delete', 'clusterrole,clusterrolebinding', `reach-${ns.name}`, '--ignore-not-found']);
    await kubectlAs(clusterAdmin, ['delete', 'clusterrolebinding', `reach-capi-${ns.name}`, '--ignore-not-found']);
    await ns.remove();
  });

  describe("libvirt's plain TCP transport (no authentication, no encryption)", () => {
    it('refuses a tenant Provider whose endpoint uses it, in a namespace no cluster admin opted in', async () => {
      for (const actor of tenant.actors) {
        for (const endpoint of ['qemu+tcp://10.0.0.1/system', 'qemu+tcp://10.0.0.1:16509/system', 'test+tcp://127.0.0.1/default']) {
          const refused = await actor.create(provider('plain', endpoint), { dryRun: true });
          expect(refused, `${actor.username} ${endpoint}`).toContain(
            `needs namespace "${ns.name}" labelled ${INSECURE_TRANSPORT_LABEL}=true by a cluster admin`,
          );
        }
        expect(await actor.create(provider('tls', 'qemu+tls://10.0.0.1/system'), { dryRun: true }), actor.username).toBeUndefined();
        expect(await actor.create(provider('ssh', 'qemu+ssh://banlieue@10.0.0.1/system'), { dryRun: true }), actor.username).toBeUndefined();
      }
    });

    it('refuses moving an existing Provider onto it', async () => {
      await t.apply(provider('moved', 'qemu+tls://10.0.0.1/system'));
      for (const actor of tenant.actors) {
        expect(await actor.patch(provider('moved', ''), { spec: { connection: { endpoint: 'qemu+tcp://10.0.0.1/system' } } })).toContain(
          INSECURE_TRANSPORT_LABEL,
        );
      }
    });

    it('admits it once a cluster admin labels the namespace', async () => {
      expect((await kubectlAs(clusterAdmin, ['label', 'namespace', ns.name, `${INSECURE_TRANSPORT_LABEL}=true`])).code).toBe(0);
      try {
        for (const actor of tenant.actors) expect(await actor.create(provider('plain', 'qemu+tcp://10.0.0.1/system'), { dryRun: true })).toBeUndefined();
      } finally {
        await kubectlAs(clusterAdmin, ['label', 'namespace', ns.name, `${INSECURE_TRANSPORT_LABEL}-`]);
      }
    });
  });

  describe('IPAM pools (addressesFromPools)', () => {
    it('refuses a machine or template drawing from a pool the tenant cannot get: the cluster-scoped pool, a namespaced one', async () => {
      for (const actor of tenant.actors) {
        for (const [what, pools] of [
          ['the cluster-scoped pool', [pool('GlobalInClusterIPPool', 'datacenter')]],
          ['a pool of the namespace', [pool('InClusterIPPool', 'team')]],
        ] as const) {
          for (const obj of [machine('m', [...pools]), template('t', [...pools])]) {
            const refused = await actor.create(obj, { dryRun: true });
            expect(refused, `${actor.username} ${obj.kind} ${what}`).toContain(
              `you may not take addresses from a pool you cannot get (of ${pools[0].kind} "${pools[0].name}")`,
            );
          }
        }
      }
    });

    it('admits a pool of the namespace the tenant may get', async () => {
      await grantPools('team-pool', 'inclusterippools', ['team'], ns.name);
      for (const actor of tenant.actors) {
        await waitFor(
          `${actor.username}'s grant to count`,
          async () => (await actor.create(machine('m', [pool('InClusterIPPool', 'team')]), { dryRun: true })) === undefined,
          30_000,
        );
        expect(await actor.create(template('t', [pool('InClusterIPPool', 'team')]), { dryRun: true })).toBeUndefined();
        expect(await actor.create(machine('m', [pool('InClusterIPPool', 'other-team')]), { dryRun: true })).toContain('"other-team"');
      }
    });

    it('refuses the cluster-scoped pool even to a tenant whose Role in the namespace names it: only a cluster-wide grant counts', async () => {
      await grantPools('global-pool-in-namespace', 'globalinclusterippools', ['datacenter'], ns.name);
      for (const actor of tenant.actors) {
        expect(await actor.create(machine('m', [pool('GlobalInClusterIPPool', 'datacenter')]), { dryRun: true })).toContain(
          'you may not take addresses from a pool you cannot get (of GlobalInClusterIPPool "datacenter")',
        );
      }
      await grantPools(`reach-${ns.name}`, 'globalinclusterippools', ['datacenter'], undefined);
      for (const actor of tenant.actors) {
        await waitFor(
          `${actor.username}'s cluster-wide grant to count`,
          async () => (await actor.create(machine('m', [pool('GlobalInClusterIPPool', 'datacenter')]), { dryRun: true })) === undefined,
          30_000,
        );
      }
    });

    it("admits what CAPI's manager clones from a template (a cluster-wide grant of use on <machines>/ippools), not the same grant in a namespace", async () => {
      const global = [pool('GlobalInClusterIPPool', 'datacenter')];
      const clones = impersonated(`capi-manager@${ns.name}`);
      const cloner = new Actor(clones);
      const bind = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string): Promise<Obj> =>
        t.apply({
          apiVersion: RBAC,
          kind,
          metadata: { name, ...(kind === 'RoleBinding' ? { namespace: ns.name } : {}) },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'banlieue-capi-infrastructure' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clones.username }],
        } as Obj);
      const withoutNics = { ...machine('m', []), spec: { template: 'ubuntu', numCpus: 1, memoryMiB: 512 } };
      // CAPI's role for banlieue's kinds, bound in the namespace only: it may write machines there, but not name any pool.
      await bind('RoleBinding', 'capi-in-namespace');
      await waitFor('the namespaced grant to count', async () => (await cloner.create(withoutNics, { dryRun: true })) === undefined, 30_000);
      expect(await cloner.create(machine('m', global), { dryRun: true })).toContain('you may not take addresses from a pool you cannot get');
      await bind('ClusterRoleBinding', `reach-capi-${ns.name}`);
      await waitFor('the cluster-wide grant to count', async () => (await cloner.create(machine('m', global), { dryRun: true })) === undefined, 30_000);
    });

    it('lets the tenant change other fields of a machine an admin made with a pool the tenant cannot get, but not add another', async () => {
      await t.apply(machine('admin-made', [pool('InClusterIPPool', 'ops')]));
      for (const actor of tenant.actors) {
        expect(await actor.patch(machine('admin-made', []), { metadata: { labels: { touched: 'yes' } } }), actor.username).toBeUndefined();
      }
      const twoNics = machineSpec([pool('InClusterIPPool', 'ops')]);
      (twoNics.network as unknown[]).push({ name: 'eth1', portGroup: 'VM Network', ipam: { addressesFromPools: [pool('InClusterIPPool', 'ops-2')] } });
      expect(await tenant.user.patch(machine('admin-made', []), { spec: { network: twoNics.network } })).toContain('"ops-2"');
    });
  });

  describe('credentials in download URLs', () => {
    it('refuses a VMImage whose Url carries a user and password, even from a cluster admin', async () => {
      const image = (ref: string): Obj => ({
        apiVersion: CORE,
        kind: 'VMImage',
        metadata: { name: `reach-${ns.name}` },
        spec: { osFamily: 'linux', osDistribution: 'debian', osVersion: '13', sources: [{ providerClass: 'cloud-hypervisor', kind: 'Url', ref }] },
      });
      expect(await admin.create(image('https://mirror:hunter2@images.example.com/debian-13.raw'), { dryRun: true })).toContain(
        'must not carry a user or password',
      );
      expect(await admin.create(image('https://token@images.example.com/debian-13.raw'), { dryRun: true })).toContain('must not carry a user or password');
      expect(await admin.create(image('https://images.example.com/debian-13.raw?X-Amz-Signature=abc'), { dryRun: true })).toBeUndefined();
    });

    describe("a presigned URL's query, as a Cloud Hypervisor host's role writes its row", () => {
      const SIGNATURE = `sig${Math.random().toString(16).slice(2)}`;
      const TOKEN = `tok${Math.random().toString(16).slice(2)}`;
      let dir: string;
      let stop: AbortController;
      let backend: RunningBackend;
      let imageName: string;

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'bnlreach-'));
        const { config } = urlImageHost(dir);
        backend = { ...cloudHypervisorBackend(config), name: 'cloud-hypervisor', credentialKeys: [], api: cloudHypervisorApi, namedTargets: () => [] };
        imageName = `reach-signed-${ns.name}`;
        await t.apply({
          apiVersion: CORE,
          kind: 'Provider',
          metadata: { name: 'host', namespace: ns.name },
          spec: { providerClassRef: { name: 'cloud-hypervisor' }, connection: { endpoint: `unix://${config.hostName}${config.stateRoot}` } },
        });
        await t.apply({
          apiVersion: CORE,
          kind: 'VMImage',
          metadata: { name: imageName },
          spec: {
            osFamily: 'linux',
            osDistribution: 'debian',
            osVersion: '13',
            sources: [
              {
                providerClass: 'cloud-hypervisor',
                kind: 'Url',
                // Nothing listens on port 9 of loopback: the download fails, and its message names the URL.
                ref: `https://127.0.0.1:9/debian-13.raw?X-Amz-Signature=${SIGNATURE}&token=${TOKEN}`,
                checksum: `sha256:${'0'.repeat(64)}`,
              },
            ],
          },
        });
        stop = new AbortController();
      });

      afterAll(async () => {
        stop?.abort();
        await backend?.close();
        await t.api.request('DELETE', `/apis/${CORE}/vmimages/${imageName}`).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      });

      it('puts neither its signature nor its token in the VMImage status', async () => {
        const log = silentLogger();
        const images = new Informer<VMImage>(t.api, { apiVersion: CORE, kind: 'VMImage', log });
        const providers = new Informer<Provider>(t.api, { apiVersion: CORE, kind: 'Provider', namespace: ns.name, log });
        void images.run(stop.signal);
        void providers.run(stop.signal);
        await waitFor(
          'the caches to hold the image and the Provider',
          () => (images.get(imageName) && providers.get(`${ns.name}/host`) ? true : undefined),
          60_000,
        );
        const rows = new ImageRowsReconciler(backend, images, providers, t.api, new ServerSideApply(t.api, FieldManager.provider('cloud-hypervisor')), 60_000);
        const messages = new Set<string>();
        // The first pass says it is downloading; a later one, once the download failed, why.
        await waitFor(
          'a row saying the download failed',
          async () => {
            await rows.reconcile(imageName, log);
            const live = (await t.get({ apiVersion: CORE, kind: 'VMImage', metadata: { name: imageName } })) as VMImage | undefined;
            const row = live?.status?.perProvider?.[0];
            if (row?.message) messages.add(row.message);
            expect(JSON.stringify(live?.status)).not.toContain(SIGNATURE);
            expect(JSON.stringify(live?.status)).not.toContain(TOKEN);
            return row?.reason === 'LookupFailed' ? row : undefined;
          },
          60_000,
        );
        expect([...messages].join('\n')).toContain('https://127.0.0.1:9/debian-13.raw');
      });
    });
  });
});
