// Tenant isolation, tried from outside as a hostile tenant would (the six
// attacks below; placement tampering is placement-tamper.test.ts): the default
// install (admission policies on), `banlieue controller` and
// `banlieue provider vsphere` running as the install's ServiceAccounts, vcsim
// as the vCenter. The tenant is a ServiceAccount with a real token and a user
// impersonated with --as/--as-group, both bound to a Role that writes
// banlieue's kinds and ConfigMaps in their namespace and reads no Secret there.
// Each attack is made as the tenant and shown refused or harmless through the
// API server and vcsim.
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretType } from '../../infra/api/well-known.js';
import { buildTools } from '../support/control-plane.js';
import { startCaptureEndpoint, type CaptureEndpoint } from '../support/capture-endpoint.js';
import { CORE, INFRA, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { startInstalledVsphereEnv } from '../support/vsphere/installed-env.js';
import { Actor, INSTALL_NS, clusterAdmin, createTenant, impersonatedServiceAccount, kubectlAs, type Tenant } from '../support/tenant.js';
import { readyWithAddress, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { uuidOf, vmsNamed } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';

const t = new TestApi();
const admin = new Actor(clusterAdmin);
const hex = (): string => Math.random().toString(16).slice(2, 10);

/** Values no request of the test ever sends anywhere but into a Secret. */
const PAYROLL_PASSWORD = `payroll-password-${hex()}${hex()}`;
const DB_ROOT_MARKER = `db-root-secret-${hex()}${hex()}`;
const BOOTSTRAP_MARKER = `kubeadm-ca-key-${hex()}${hex()}`;
const CONFIGMAP_MARKER = `tenant-own-user-data-${hex()}`;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface SecretObj extends Obj {
  type?: string;
  metadata: Obj['metadata'] & { resourceVersion?: string; ownerReferences?: { kind: string; name: string; uid: string }[] };
}

/** A full owner reference, as a tenant can write one on anything they create. */
interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

const conditionOf = (o: Obj | undefined, type: string): Condition | undefined =>
  (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

async function eventsOf(ns: string, name: string): Promise<{ reason: string; type: string; note: string }[]> {
  const list = await t.api.request<{ items: { reason: string; type: string; note: string; regarding?: { name?: string } }[] }>(
    'GET',
    `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
  );
  return list.items.filter((e) => e.regarding?.name === name);
}

/** Every guestinfo value of every VM in vcsim, base64 ones decoded, by VM name. */
async function guestData(client: VsphereClient): Promise<Map<string, string>> {
  const byVm = new Map<string, string>();
  for (const dc of await client.inventory.datacenters()) {
    for (const summary of await client.vms.list(dc.vmFolder)) {
      if (summary.template) continue;
      const extra = await client.vms.extraConfig(summary.ref);
      const values = [...extra]
        .filter(([key]) => key.startsWith('guestinfo.'))
        .flatMap(([key, value]) => (extra.get(`${key}.encoding`) === 'base64' ? [value, Buffer.from(value, 'base64').toString('utf8')] : [value]));
      byVm.set(summary.name, values.join('\n'));
    }
  }
  return byVm;
}

/** What vcsim says about a VM, for before/after comparisons: power, shape, ownership mark and guest data. */
async function vmState(client: VsphereClient, uuid: string): Promise<Record<string, unknown> | undefined> {
  const ref = await client.search.findVmByBiosUuid(uuid);
  if (!ref) return undefined;
  const [summary, hardware, extra] = await Promise.all([client.vms.summary(ref), client.vms.hardware(ref), client.vms.extraConfig(ref)]);
  return {
    ref: ref.value,
    name: summary.name,
    powerState: summary.powerState,
    numCPUs: hardware.numCPUs,
    memoryMB: hardware.memoryMB,
    disksKB: hardware.disks.map((d) => d.capacityKB).sort(),
    owner: extra.get('banlieue.owner'),
    guestinfo: [...extra].filter(([key]) => key.startsWith('guestinfo.')).sort(),
  };
}

describe('tenant isolation on the default install (vcsim, both roles as their ServiceAccounts)', () => {
  let env: VsphereEnv;
  let tenant: Tenant;
  let ns: string;
  let failureDomain: string;
  let template: string;

  const secret = (name: string, data: Record<string, string>, type = 'Opaque', labels: Record<string, string> = {}): SecretObj => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns, labels },
    type,
    stringData: data,
  });
  const vsphereMachine = (
    name: string,
    spec: Record<string, unknown> = {},
    metadata: { annotations?: Record<string, string>; ownerReferences?: OwnerReference[] } = {},
  ): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachine',
    metadata: { name, namespace: ns, ...metadata },
    spec: { providerRef: { name: 'vcsim' }, failureDomain, template, numCpus: 1, memoryMiB: 512, ...spec },
  });
  const tenantVm = (name: string, spec: Record<string, unknown> = {}): Obj =>
    vm(ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, spec);
  const absent = async (obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<boolean> => (await t.get(obj)) === undefined;

  beforeAll(async () => {
    env = await startInstalledVsphereEnv('tenant');
    ns = env.ns;
    tenant = await createTenant(ns);
    const provider = await t.get(env.world.provider);
    const fds = provider?.status?.failureDomains as { name: string; attributes: { raw: Record<string, string> } }[];
    // The template is in DC0: a machine that did clone would clone there.
    failureDomain = fds.find((fd) => fd.attributes.raw.datacenter === 'DC0')?.name ?? '';
    template = (env.world.vmImage.spec?.sources as { ref: string }[])[0]?.ref ?? '';
    // Policies load asynchronously after the install: wait until each one used here answers.
    await waitFor(
      'the reference policies to load',
      async () =>
        (await tenant.serviceAccount.create(tenantVm('probe', { userData: { secretRef: { name: 'vcsim-creds' } } }), { dryRun: true }))?.includes(
          'you may not reference',
        ) || undefined,
      60_000,
    );
    await waitFor(
      'the providerID policy to load',
      async () =>
        (
          await tenant.serviceAccount.create(vsphereMachine('probe', { providerID: 'vsphere://4211a1b2-1111-2222-3333-444455556666' }), { dryRun: true })
        )?.includes('spec.providerID') || undefined,
      60_000,
    );

    // The tenant's own VM, running, with user-data from a ConfigMap they wrote.
    expect(
      await tenant.serviceAccount.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'web-ud', namespace: ns },
        data: { 'user-data': `#cloud-config\nwrite_files: [{path: /etc/marker, content: ${CONFIGMAP_MARKER}}]\n` },
      }),
    ).toBeUndefined();
    expect(await tenant.serviceAccount.create(tenantVm('web', { userData: { configMapRef: { name: 'web-ud' } } }))).toBeUndefined();
    await readyWithAddress(env, 'web', '10.50.0.10', 90_000);
  }, 300_000);

  afterAll(() => stopVsphereEnv(env), 180_000);

  it('gives the tenant write access to VMs, machines, Providers and ConfigMaps in their namespace, and no read of its Secrets', async () => {
    for (const actor of tenant.actors) {
      for (const resource of ['virtualmachines.banlieue.io', 'providers.banlieue.io', 'vspheremachines.infrastructure.banlieue.io', 'configmaps']) {
        expect(await actor.can('create', resource, ns), `${actor.username} create ${resource}`).toBe(true);
      }
      for (const verb of ['get', 'list', 'watch', 'create', 'update'])
        expect(await actor.can(verb, 'secrets', ns), `${actor.username} ${verb} secrets`).toBe(false);
      expect(
        await actor.can('update', 'vspheremachines.infrastructure.banlieue.io', ns, 'providerid'),
        `${actor.username} update vspheremachines/providerid`,
      ).toBe(false);
    }
  });

  describe('1. hijacking a VM banlieue did not create', () => {
    let foreignUuid: string;
    let before: Awaited<ReturnType<typeof vmState>>;

    beforeAll(async () => {
      // Made in vCenter by someone else: a running clone of the template, with no banlieue mark.
      const [dc] = await env.client.inventory.datacenters();
      if (!dc) throw new Error('vcsim has no datacenter');
      const [cluster] = await env.client.inventory.clusters(dc.hostFolder);
      const source = await env.client.search.findByInventoryPath(`${dc.name}/vm/${template}`);
      if (!cluster || !source) throw new Error('vcsim inventory is not as expected');
      const ref = await env.client.vms.clone(source, dc.vmFolder, `payroll-db-${hex()}`, { location: { pool: cluster.resourcePool }, powerOn: true });
      foreignUuid = (await env.client.vms.summary(ref)).uuid ?? '';
      before = await vmState(env.client, foreignUuid);
      expect(before).toMatchObject({ powerState: 'poweredOn', owner: undefined });
    });

    it("refuses a tenant's VSphereMachine whose spec.providerID names the foreign VM, on create and on update", async () => {
      for (const actor of tenant.actors) {
        const refused = await actor.create(vsphereMachine('hijack', { providerID: `vsphere://${foreignUuid}`, numCpus: 8, desiredPowerState: 'PoweredOff' }));
        expect(refused).toContain("spec.providerID of a VSphereMachine is written by banlieue's provider role");
        expect(refused).toContain(`${actor.username} may not set or change it`);
      }
      expect(await absent(vsphereMachine('hijack'))).toBe(true);
      // Set on a machine of theirs that has none yet (paused: the provider stamps nothing), or changed on one that has.
      const idle = vsphereMachine('idle', {}, { annotations: { 'cluster.x-k8s.io/paused': '' } });
      expect(await tenant.serviceAccount.create(idle)).toBeUndefined();
      for (const actor of tenant.actors) {
        expect(await actor.patch(idle, { spec: { providerID: `vsphere://${foreignUuid}` } })).toContain(`${actor.username} may not set or change it`);
        // The schema's immutability rule answers first here.
        expect(await actor.patch(vsphereMachine('web'), { spec: { providerID: `vsphere://${foreignUuid}` } })).toMatch(
          /providerID is immutable once set|may not set or change it/,
        );
      }
      expect((await t.get(idle))?.spec?.providerID).toBeUndefined();
      expect(await tenant.serviceAccount.delete(idle)).toBeUndefined();
      // A template may not carry one at all (every clone would claim the same VM), whoever writes it.
      const templateWithId = {
        apiVersion: INFRA,
        kind: 'VSphereMachineTemplate',
        metadata: { name: 'hijack', namespace: ns },
        spec: { template: { spec: { template, numCpus: 1, memoryMiB: 512, providerID: `vsphere://${foreignUuid}` } } },
      };
      expect(await admin.create(templateWithId)).toMatch(/providerID/);
      expect(await vmState(env.client, foreignUuid)).toEqual(before);
    });

    it('marks machines a cluster admin points at the foreign VM Ready=False VMNotOwned (two of them), and changes nothing in vCenter', async () => {
      // Admission lets a cluster admin set providerID (clusterctl move creates machines so).
      for (const name of ['hijack-a', 'hijack-b']) {
        expect(
          await admin.create(vsphereMachine(name, { providerID: `vsphere://${foreignUuid}`, numCpus: 8, memoryMiB: 4096, desiredPowerState: 'PoweredOff' })),
        ).toBeUndefined();
      }
      for (const name of ['hijack-a', 'hijack-b']) {
        const live = await t.condition(vsphereMachine(name), 'Ready', 'False', 'VMNotOwned', 60_000);
        expect(conditionOf(live, 'Ready')?.message).toContain(
          `the VM with UUID ${foreignUuid} carries no banlieue ownership mark, not to VSphereMachine/${ns}/${name}`,
        );
        expect(live.status?.initialization?.provisioned).not.toBe(true);
      }
      expect(await vmState(env.client, foreignUuid)).toEqual(before);
      expect(await vmsNamed(env.client, 'hijack-')).toEqual([]);
    });

    it('leaves the foreign VM in vCenter, as it was, when those machines are deleted, with a VMNotOwned Event', async () => {
      for (const name of ['hijack-a', 'hijack-b']) await t.delete(vsphereMachine(name));
      for (const name of ['hijack-a', 'hijack-b']) await t.gone(vsphereMachine(name), 60_000);
      expect(await vmState(env.client, foreignUuid)).toEqual(before);
      for (const name of ['hijack-a', 'hijack-b']) {
        const notOwned = (await eventsOf(ns, name)).find((e) => e.reason === 'VMNotOwned' && e.note.includes('left on the backend'));
        expect(notOwned?.type, `a VMNotOwned Event for ${name}`).toBe('Warning');
        expect((await eventsOf(ns, name)).map((e) => e.reason)).not.toContain('Deleted');
      }
    });

    it("marks a tenant machine that forges the owner reference of the tenant's VM (so derives its UUID) VMNotOwned, and deleting it leaves that VM running", async () => {
      const web = await t.get(tenantVm('web'));
      const webUuid = uuidOf((await t.get(machineRef('vsphere', ns, 'web')))?.spec?.providerID as string);
      const webBefore = await vmState(env.client, webUuid);
      expect(webBefore).toMatchObject({ name: 'web', powerState: 'poweredOn', owner: `VSphereMachine/${ns}/web` });
      const twin = vsphereMachine(
        'web-twin',
        { numCpus: 8, desiredPowerState: 'PoweredOff' },
        {
          ownerReferences: [{ apiVersion: CORE, kind: 'VirtualMachine', name: 'web', uid: web?.metadata.uid ?? '', controller: true }],
        },
      );
      expect(await tenant.user.create(twin)).toBeUndefined();
      const live = await t.condition(twin, 'Ready', 'False', 'VMNotOwned', 60_000);
      expect(live.spec?.providerID).toBe(`vsphere://${webUuid}`);
      expect(conditionOf(live, 'Ready')?.message).toContain(`belongs to VSphereMachine/${ns}/web, not to VSphereMachine/${ns}/web-twin`);
      expect(await vmState(env.client, webUuid)).toEqual(webBefore);

      expect(await tenant.user.delete(twin)).toBeUndefined();
      await t.gone(twin, 60_000);
      expect(await vmState(env.client, webUuid)).toEqual(webBefore);
      expect((await eventsOf(ns, 'web-twin')).map((e) => e.reason)).toContain('VMNotOwned');
      await t.condition(tenantVm('web'), 'Ready', 'True');
    });
  });

  describe('2. receiving the vCenter password at a tenant endpoint', () => {
    let capture: CaptureEndpoint;
    let probes: number;

    const CREDENTIALS_REFUSAL = (secretName: string): string => `spec.connection.credentialsRef: you may not reference Secret "${secretName}"`;
    const INSECURE_REFUSAL = 'spec.connection.insecureSkipTLSVerify needs namespace';
    const exfil = (name: string, connection: Record<string, unknown>): Obj => ({
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name, namespace: ns },
      spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint: capture.url, credentialsRef: { name: 'payroll-creds' }, ...connection } },
    });

    beforeAll(async () => {
      capture = await startCaptureEndpoint();
      // The endpoint works: the test's own probe is recorded (and is the only thing it may ever record).
      await new Promise<void>((resolve, reject) => {
        request(capture.url, { method: 'POST', ca: capture.caPem }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end('probe');
      });
      probes = capture.connections();
      expect(capture.requests()).toHaveLength(1);
      await t.apply(secret('payroll-creds', { username: 'administrator@vsphere.local', password: PAYROLL_PASSWORD }));
    });
    afterAll(() => capture?.stop());

    it('refuses a tenant Provider that would send a Secret the tenant cannot read to their endpoint, trusted or insecure', async () => {
      for (const actor of tenant.actors) {
        for (const [name, connection] of [
          ['exfil-insecure', { insecureSkipTLSVerify: true }],
          ['exfil-trusted', { caBundle: { inline: capture.caPem } }],
          ['exfil-vcsim-creds', { caBundle: { inline: capture.caPem }, credentialsRef: { name: 'vcsim-creds' } }],
        ] as const) {
          const refused = await actor.create(exfil(name, connection));
          const secretName = 'credentialsRef' in connection ? 'vcsim-creds' : 'payroll-creds';
          // Both policies refuse an insecure one; the API server reports whichever answered first.
          const rules = [CREDENTIALS_REFUSAL(secretName), ...('insecureSkipTLSVerify' in connection ? [INSECURE_REFUSAL] : [])];
          expect(
            rules.some((rule) => refused?.includes(rule)),
            `${actor.username} ${name}: ${refused}`,
          ).toBe(true);
          expect(await absent(exfil(name, {}))).toBe(true);
        }
      }
    });

    it('refuses it in a namespace a cluster admin labelled for insecure TLS too', async () => {
      expect((await kubectlAs(clusterAdmin, ['label', 'namespace', ns, 'banlieue.io/allow-insecure-tls=true'])).code).toBe(0);
      try {
        for (const actor of tenant.actors) {
          expect(await actor.create(exfil('exfil-labelled', { insecureSkipTLSVerify: true }))).toContain(CREDENTIALS_REFUSAL('payroll-creds'));
        }
        expect(await absent(exfil('exfil-labelled', {}))).toBe(true);
      } finally {
        await kubectlAs(clusterAdmin, ['label', 'namespace', ns, 'banlieue.io/allow-insecure-tls-']);
      }
    });

    it("refuses moving the admin's Provider to the tenant's endpoint; the Provider stays Ready where it was", async () => {
      for (const actor of tenant.actors) {
        const insecure = await actor.patch(env.world.provider, { spec: { connection: { endpoint: capture.url, insecureSkipTLSVerify: true } } });
        expect(
          [CREDENTIALS_REFUSAL('vcsim-creds'), INSECURE_REFUSAL].some((rule) => insecure?.includes(rule)),
          insecure,
        ).toBe(true);
        const trusted = await actor.patch(env.world.provider, { spec: { connection: { endpoint: capture.url, caBundle: { inline: capture.caPem } } } });
        expect(trusted).toContain(CREDENTIALS_REFUSAL('vcsim-creds'));
      }
      const live = await t.condition(env.world.provider, 'Ready', 'True');
      expect(live.spec?.connection?.endpoint).toBe(env.vcsim.url);
    });

    it("sends nothing to the tenant's endpoint: no connection, no request, no password", () => {
      expect(capture.connections()).toBe(probes);
      expect(capture.requests().map((r) => r.body)).toEqual(['probe']);
      expect(capture.received()).not.toContain(PAYROLL_PASSWORD);
      expect(capture.received()).not.toContain(env.vcsim.password);
    });
  });

  describe('3. copying a Secret the tenant cannot read into a VM', () => {
    beforeAll(async () => {
      await t.apply(
        secret('db-root', {
          'user-data': `#cloud-config\nchpasswd: {list: "root:${DB_ROOT_MARKER}"}\n`,
          value: `#cloud-config\nchpasswd: {list: "root:${DB_ROOT_MARKER}"}\n`,
        }),
      );
    });

    it('refuses user-data naming it on a VirtualMachine, a VSphereMachine and a VSphereMachineTemplate', async () => {
      for (const actor of tenant.actors) {
        expect(await actor.create(tenantVm('steal', { userData: { secretRef: { name: 'db-root' } } }))).toContain(
          'spec.userData.secretRef: you may not reference Secret "db-root"',
        );
        expect(await actor.create(vsphereMachine('steal', { userDataSecretRef: { name: 'db-root' } }))).toContain(
          'spec.userDataSecretRef: you may not reference Secret "db-root"',
        );
        const machineTemplate = {
          apiVersion: INFRA,
          kind: 'VSphereMachineTemplate',
          metadata: { name: 'steal', namespace: ns },
          spec: { template: { spec: { template, numCpus: 1, memoryMiB: 512, userDataSecretRef: { name: 'db-root' } } } },
        };
        expect(await actor.create(machineTemplate)).toContain('spec.template.spec.userDataSecretRef: you may not reference Secret "db-root"');
        // Nor by pointing an existing VM at it.
        expect(await actor.patch(tenantVm('web'), { spec: { userData: { configMapRef: null, secretRef: { name: 'db-root' } } } })).toContain(
          'spec.userData.secretRef: you may not reference Secret "db-root"',
        );
      }
      expect(await absent(tenantVm('steal'))).toBe(true);
      expect(await absent(vsphereMachine('steal'))).toBe(true);
    });

    describe("through a CAPI Machine's bootstrap data", () => {
      const crdFile = async (): Promise<string> => join((await buildTools()).capiModuleDir, 'core/config/crd/bases/cluster.x-k8s.io_machines.yaml');
      const capiMachine = (): Obj =>
        ({
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Machine',
          metadata: { name: 'cp-0', namespace: ns },
          spec: {
            clusterName: 'work',
            bootstrap: { dataSecretName: 'cp-0-bootstrap' },
            infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: 'VSphereMachine', name: 'cp-0' },
          },
        }) as Obj;

      beforeAll(async () => {
        // CAPI's Machine kind, as CAPI ships it; a deletion left by an earlier suite finishes first.
        await waitFor(
          'no Machine CRD being deleted',
          async () => {
            const run = await kubectlAs(clusterAdmin, [
              'get',
              'crd',
              'machines.cluster.x-k8s.io',
              '-o',
              'jsonpath={.metadata.deletionTimestamp}',
              '--ignore-not-found',
            ]);
            return run.code === 0 && run.stdout.trim() === '';
          },
          60_000,
        );
        expect((await kubectlAs(clusterAdmin, ['apply', '--server-side', '-f', await crdFile()])).code).toBe(0);
        expect((await kubectlAs(clusterAdmin, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/machines.cluster.x-k8s.io'])).code).toBe(0);
        // A control-plane Machine of a cluster in the tenant's namespace, and its bootstrap data (CA keys, join tokens).
        await t.apply(
          secret(
            'cp-0-bootstrap',
            { value: `#cloud-config\nwrite_files: [{path: /etc/kubernetes/pki/ca.key, content: ${BOOTSTRAP_MARKER}}]\n`, format: 'cloud-config' },
            'cluster.x-k8s.io/secret',
          ),
        );
        await waitFor(
          'the Machine to be admitted',
          async () => (await admin.create(capiMachine())) === undefined || (await t.get(capiMachine())) !== undefined,
          60_000,
        );
      }, 120_000);

      afterAll(async () => {
        await t.delete(capiMachine());
        // Gone before the next suite, which may apply it again.
        await kubectlAs(clusterAdmin, ['delete', 'crd', 'machines.cluster.x-k8s.io', '--timeout=60s']);
      });

      it("keeps a Machine's bootstrap Secret out of a tenant VSphereMachine that names that Machine as its owner", async () => {
        // The tenant may see the Machine (its uid), not its bootstrap Secret.
        expect(await tenant.serviceAccount.can('get', 'secrets', ns)).toBe(false);
        const owner = await tenant.serviceAccount.get(capiMachine());
        const thief = vsphereMachine(
          'cp-0-twin',
          {},
          {
            ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'cp-0', uid: owner.metadata.uid ?? '', controller: true }],
          },
        );
        const refused = await tenant.serviceAccount.create(thief);
        if (refused === undefined) {
          // Admitted: then the provider must not boot it with the Machine's bootstrap data. Wait until it has
          // either got as far as a running VM or settled on a reason.
          await waitFor(
            'cp-0-twin to run or to say why not',
            async () => {
              const live = await t.get(thief);
              const ready = conditionOf(live, 'Ready');
              return (
                live?.status?.observedPowerState !== undefined ||
                (ready?.status === 'False' && !['Provisioning', 'Pending', 'WaitingForAddress', undefined].includes(ready.reason))
              );
            },
            90_000,
          );
        }
        const leaked = [...(await guestData(env.client))].filter(([, data]) => data.includes(BOOTSTRAP_MARKER)).map(([name]) => name);
        const events = (await eventsOf(ns, 'cp-0-twin')).map((e) => `${e.reason}: ${e.note}`);
        await t.delete(thief);
        await t.gone(thief, 60_000);
        expect(leaked, `VMs whose guestinfo holds the bootstrap Secret (cp-0-twin's Events: ${events.join(' | ')})`).toEqual([]);
      }, 180_000);
    });

    it("puts no unreadable Secret's bytes, and no injected key, in any guest; the tenant's own user-data does reach its VM", async () => {
      const guests = await guestData(env.client);
      expect(guests.get('web')).toContain(CONFIGMAP_MARKER);
      for (const [name, data] of guests) {
        for (const planted of [DB_ROOT_MARKER, BOOTSTRAP_MARKER, PAYROLL_PASSWORD]) expect(data, `guestinfo of ${name}`).not.toContain(planted);
        expect(data, `guestinfo of ${name}`).not.toMatch(/runcmd|reboot/);
      }
    });
  });

  describe("4. taking over someone else's Secret", () => {
    const TLS_KEY = `-----BEGIN PRIVATE KEY-----\n${hex()}${hex()}\n-----END PRIVATE KEY-----\n`;
    const TLS_CRT = `-----BEGIN CERTIFICATE-----\n${hex()}\n-----END CERTIFICATE-----\n`;

    it.each([
      ['kubernetes.io/tls', 'site'],
      [SecretType.userData, 'shop'],
    ])(
      'leaves an admin-made %s Secret named <vm>-user-data as it was when the tenant names a VM after it, and the VM says UserDataSecretConflict',
      async (type, name) => {
        const secretName = `${name}-user-data`;
        const beforeSecret = await t.api.request<SecretObj>('POST', `/api/v1/namespaces/${ns}/secrets`, {
          body: secret(secretName, { 'tls.key': TLS_KEY, 'tls.crt': TLS_CRT }, type, { app: 'ingress' }),
        });
        expect(
          await tenant.user.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `${name}-ud`, namespace: ns },
            data: { 'user-data': '#!/bin/sh\necho ${VM_NAME}\n' },
          }),
        ).toBeUndefined();
        expect(await tenant.user.create(tenantVm(name, { userData: { configMapRef: { name: `${name}-ud` } } }))).toBeUndefined();

        const live = await t.condition(tenantVm(name), 'Scheduled', 'False', 'UserDataSecretConflict', 60_000);
        expect(conditionOf(live, 'Scheduled')?.message).toContain(`Secret ${secretName} exists and is not this VirtualMachine's rendered user-data`);
        expect(JSON.stringify(live.status)).not.toContain(Buffer.from(TLS_KEY).toString('base64'));
        const after = (await t.get(secret(secretName, {}))) as SecretObj;
        expect(after.type).toBe(type);
        expect(after.data).toEqual(beforeSecret.data);
        expect(after.metadata.labels).toEqual(beforeSecret.metadata.labels);
        expect(after.metadata.ownerReferences).toEqual(beforeSecret.metadata.ownerReferences);
        expect(after.metadata.resourceVersion).toBe(beforeSecret.metadata.resourceVersion);
        expect(await absent(machineRef('vsphere', ns, name))).toBe(true);
        expect(await vmsNamed(env.client, name)).toEqual([]);

        // Deleting the VM takes nothing of the Secret with it.
        expect(await tenant.user.delete(tenantVm(name))).toBeUndefined();
        await t.gone(tenantVm(name), 60_000);
        const kept = (await t.get(secret(secretName, {}))) as SecretObj;
        expect(kept.metadata.uid).toBe(beforeSecret.metadata.uid);
        expect(kept.metadata.resourceVersion).toBe(beforeSecret.metadata.resourceVersion);
      },
    );
  });

  describe('5. injecting into cloud-config and netplan', () => {
    it('refuses a static address domain with a newline, on a VirtualMachine and a VSphereMachine', async () => {
      const domain = 'example.com\nruncmd: [reboot]';
      for (const actor of tenant.actors) {
        const refused = await actor.create(tenantVm('inject', { networkOverrides: [{ name: 'eth0', static: { address: '10.60.0.10', prefix: 24, domain } }] }));
        expect(refused).toContain('spec.networkOverrides[0].static.domain');
        const machine = await actor.create(
          vsphereMachine('inject', { network: [{ name: 'eth0', portGroup: 'VM Network', ipam: { static: { address: '10.60.0.10', prefix: 24, domain } } }] }),
        );
        expect(machine).toContain('spec.network[0].ipam.static.domain');
      }
      expect(await absent(tenantVm('inject'))).toBe(true);
      expect(await absent(vsphereMachine('inject'))).toBe(true);
    });

    it('refuses a VSphereMachine NIC named $(reboot)', async () => {
      for (const actor of tenant.actors) {
        expect(await actor.create(vsphereMachine('inject-nic', { network: [{ name: '$(reboot)', portGroup: 'VM Network' }] }))).toContain(
          'spec.network[0].name',
        );
      }
      expect(await absent(vsphereMachine('inject-nic'))).toBe(true);
    });

    it('refuses a VMClass interface named $(reboot), even from a cluster admin (the tenant may not write classes at all)', async () => {
      const cls = {
        apiVersion: CORE,
        kind: 'VMClass',
        metadata: { name: `inject-${hex()}` },
        spec: {
          hardware: { cpus: 1, memoryMiB: 512, disks: [{ name: 'os', sizeGiB: 10, storageClass: 'fast' }] },
          network: { interfaces: [{ name: '$(reboot)', networkClass: 'lan' }] },
        },
      };
      expect(await admin.create(cls)).toContain('spec.network.interfaces[0].name');
      for (const actor of tenant.actors) expect(await actor.create(cls)).toMatch(/forbidden/i);
    });
  });

  describe("6. the controller's identity", () => {
    const controller = new Actor(impersonatedServiceAccount(INSTALL_NS, 'banlieue-controller'));
    const systemSecret = (): SecretObj => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `tenant-isolation-${ns}`, namespace: 'kube-system' },
      type: 'Opaque',
      stringData: { token: 'cluster-bootstrap' },
    });
    const tokenSecret = (namespace: string, serviceAccount: string): SecretObj => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `minted-${serviceAccount}`, namespace, annotations: { 'kubernetes.io/service-account.name': serviceAccount } },
      type: 'kubernetes.io/service-account-token',
    });

    beforeAll(async () => {
      await waitFor(
        'the controller Secret guard to load',
        async () => (await controller.create({ ...systemSecret(), type: SecretType.userData }, { dryRun: true })) !== undefined || undefined,
        60_000,
      );
    });
    afterAll(() => t.delete(systemSecret()));

    it('may not overwrite, delete or plant a Secret in kube-system', async () => {
      const before = await t.api.request<SecretObj>('POST', '/api/v1/namespaces/kube-system/secrets', { body: systemSecret() });
      expect(await controller.patch(systemSecret(), { stringData: { token: 'taken-over' } })).toMatch(/may not write Secrets in kube-\* namespaces|forbidden/i);
      expect(await controller.delete(systemSecret())).toMatch(/may not write Secrets in kube-\* namespaces|forbidden/i);
      expect(
        await controller.create({ ...systemSecret(), metadata: { name: `planted-${ns}`, namespace: 'kube-system' }, type: SecretType.userData }),
      ).toContain('may not write Secrets in kube-* namespaces');
      const after = (await t.get(systemSecret())) as SecretObj;
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(await absent({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `planted-${ns}`, namespace: 'kube-system' } })).toBe(true);
    });

    it("may not overwrite a tenant's Secret of another type", async () => {
      const before = (await t.get(secret('payroll-creds', {}))) as SecretObj;
      expect(await controller.patch(secret('payroll-creds', {}), { stringData: { password: 'taken-over' } })).toContain(
        `may write only Secrets of type ${SecretType.userData}`,
      );
      expect(((await t.get(secret('payroll-creds', {}))) as SecretObj).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    });

    it('may not mint a ServiceAccount token, as a Secret or through TokenRequest; no token Secret exists afterwards', async () => {
      for (const [namespace, serviceAccount] of [
        [ns, 'tenant'],
        [INSTALL_NS, 'banlieue-provider-vsphere'],
        ['kube-system', 'default'],
      ] as const) {
        expect(await controller.create(tokenSecret(namespace, serviceAccount))).toMatch(
          /may not write ServiceAccount token Secrets|may not write Secrets in kube-\* namespaces/,
        );
      }
      const tokenRequest = await kubectlAs(controller.identity, ['create', 'token', 'banlieue-provider-vsphere', '-n', INSTALL_NS]);
      expect(tokenRequest.code).not.toBe(0);
      expect(tokenRequest.stderr).toMatch(/forbidden/i);
      for (const namespace of [ns, INSTALL_NS, 'kube-system']) {
        const tokens = await t.api.request<{ items: Obj[] }>('GET', `/api/v1/namespaces/${namespace}/secrets`, {
          query: { fieldSelector: 'type=kubernetes.io/service-account-token' },
        });
        expect(
          tokens.items.map((s) => s.metadata.name),
          `token Secrets in ${namespace}`,
        ).toEqual([]);
      }
    });
  });
});
