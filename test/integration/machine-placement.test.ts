// Machines stay where their VMs were created, through the generic machine
// reconciler (any backend: here the test-only fake one, whose VMs live in one
// zone each, as a vSphere VM lives on one vCenter): a machine's VM is looked for
// and deleted where it was created (status.placement), never where the spec
// points later; admission refuses a move; a Provider with VMs on it is not
// deleted first; a machine that never created anything finishes deleting.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTools, type ControlPlane } from '../support/control-plane.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { FakeMachineKind } from '../support/fake-backend/fake-machine.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const MACHINES = 'fakemachines.infrastructure.banlieue.io';
const PROVIDERS = 'providers.banlieue.io';

interface Live {
  metadata: { uid?: string; deletionTimestamp?: string; finalizers?: string[] };
  spec: Record<string, unknown> & { providerID?: string };
  status?: {
    placement?: { provider: string; failureDomain: string; location?: Record<string, string> };
    initialization?: { provisioned?: boolean };
    conditions?: { type: string; status: string; reason: string; message?: string }[];
  };
}

async function get(cp: ControlPlane, resource: string, ns: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', ns, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const readyOf = (live: Live | undefined): { status: string; reason: string; message?: string } | undefined =>
  live?.status?.conditions?.find((c) => c.type === 'Ready');

/** Reasons of the Events about one object. */
async function eventReasons(cp: ControlPlane, ns: string, name: string): Promise<string[]> {
  const list = JSON.parse(await cp.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json'])) as {
    items: { reason: string }[];
  };
  return list.items.map((e) => e.reason);
}

/** The apiserver's refusal of `args`, or undefined when it accepted them. */
async function refusal(cp: ControlPlane, args: string[]): Promise<string | undefined> {
  try {
    await cp.kubectl(args);
    return undefined;
  } catch (err) {
    return String(err);
  }
}

/** A fake Provider: it publishes one failure domain, `<name>-zone`, whose VMs live in zone `<name>-zone`. */
const provider = (ns: string, name: string): object => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name, namespace: ns },
  spec: { providerClassRef: { name: 'fake' }, connection: { endpoint: `https://${name}.fake.invalid`, credentialsRef: { name: 'fake-creds' } } },
});

const machine = (ns: string, name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): object => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: FakeMachineKind.kind,
  metadata: { name, namespace: ns, ...metadata },
  spec: { image: 'debian-13', cpus: 1, memoryMiB: 512, desiredPowerState: 'PoweredOff', ...spec },
});

describe('where a machine VM was created', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(500);
  const fake = fakeDescriptor(cloud);
  let stopRoles: () => Promise<void>;

  /** A namespace with the credentials and Providers east and west. */
  async function tenant(ns: string): Promise<void> {
    const cp = plane();
    await cp.kubectl(['create', 'namespace', ns]);
    await applyObjects(cp, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: ns }, stringData: { token: 's3cr3t' } },
      provider(ns, 'east'),
      provider(ns, 'west'),
    ]);
    for (const name of ['east', 'west']) {
      await waitFor(
        `Provider ${name} to publish its failure domain`,
        async () => {
          const live = JSON.parse(await cp.kubectl(['get', PROVIDERS, name, '-n', ns, '-o', 'json'])) as { status?: { failureDomains?: unknown[] } };
          return live.status?.failureDomains?.length === 1;
        },
        60_000,
      );
    }
  }

  /** The machine, once provisioned; and its VM's UUID. */
  async function provisioned(ns: string, name: string): Promise<{ live: Live; uuid: string }> {
    const live = await waitFor(
      `${name} to be provisioned`,
      async () => {
        const m = await get(plane(), MACHINES, ns, name);
        return m?.status?.initialization?.provisioned === true ? m : undefined;
      },
      120_000,
    );
    return { live, uuid: String(live.spec.providerID).slice('fake://'.length) };
  }

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    stopRoles = runFakeRoles(cp.kubeconfigPath, fake, { taskPollMs: 250 });
  }, 180_000);

  afterAll(() => stopRoles());

  it('records where it created the VM, refuses a spec naming another Provider or failure domain, and deletes the VM where it is', async () => {
    const cp = plane();
    const ns = 'placement-move';
    await tenant(ns);
    await applyObjects(cp, [machine(ns, 'm1', { providerRef: { name: 'east' }, failureDomain: 'east-zone' })]);
    const { live, uuid } = await provisioned(ns, 'm1');
    expect(live.status?.placement).toEqual({ provider: 'east', failureDomain: 'east-zone', location: { zone: 'east-zone' } });
    expect(cloud.vms.get(uuid)?.zone).toBe('east-zone');

    const moveProvider = await refusal(cp, [
      'patch',
      MACHINES,
      'm1',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { providerRef: { name: 'west' } } }),
    ]);
    expect(moveProvider).toEqual(expect.stringContaining('cannot name another place once the VM was created'));
    const moveDomain = await refusal(cp, ['patch', MACHINES, 'm1', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { failureDomain: 'west-zone' } })]);
    expect(moveDomain).toEqual(expect.stringContaining('cannot name another place once the VM was created'));
    // What does not move it passes: a label, or the place named as it is.
    expect(await refusal(cp, ['label', MACHINES, 'm1', '-n', ns, 'team=a'])).toBeUndefined();

    await cp.kubectl(['delete', MACHINES, 'm1', '-n', ns, '--wait=false']);
    await waitFor('m1 to be gone', async () => !(await get(cp, MACHINES, ns, 'm1')), 120_000);
    expect(cloud.vms.has(uuid)).toBe(false);
  });

  it("keeps the VM where it was created when its CAPI Machine's failure domain changes: PlacementChanged, and deleted there", async () => {
    const cp = plane();
    const ns = 'placement-capi';
    await cp.kubectl(['apply', '--server-side', '-f', join((await buildTools()).capiModuleDir, 'core/config/crd/bases/cluster.x-k8s.io_machines.yaml')]);
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/machines.cluster.x-k8s.io']);
    await tenant(ns);
    await applyObjects(cp, [
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'md-0-bootstrap', namespace: ns },
        stringData: { value: '#cloud-config\n', format: 'cloud-config' },
      },
      {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: { name: 'md-0', namespace: ns },
        spec: {
          clusterName: 'work',
          failureDomain: 'east-zone',
          bootstrap: { dataSecretName: 'md-0-bootstrap' },
          infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: FakeMachineKind.kind, name: 'md-0' },
        },
      },
    ]);
    const owner = await get(cp, 'machines.cluster.x-k8s.io', ns, 'md-0');
    const ownerReferences = [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'md-0', uid: owner?.metadata.uid ?? '', controller: true }];
    await applyObjects(cp, [machine(ns, 'md-0', {}, { labels: { 'cluster.x-k8s.io/cluster-name': 'work' }, ownerReferences })]);
    const { live, uuid } = await provisioned(ns, 'md-0');
    expect(live.status?.placement).toMatchObject({ provider: 'east', failureDomain: 'east-zone' });

    // The InfraMachine's admission cannot see its Machine: the change reaches the provider, which says so and moves nothing.
    await cp.kubectl(['patch', 'machines.cluster.x-k8s.io', 'md-0', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { failureDomain: 'west-zone' } })]);
    await cp.kubectl(['annotate', MACHINES, 'md-0', '-n', ns, 'poke=1']);
    const reported = await waitFor(
      'md-0 to report PlacementChanged',
      async () => {
        const m = await get(cp, MACHINES, ns, 'md-0');
        return readyOf(m)?.reason === 'PlacementChanged' ? m : undefined;
      },
      60_000,
    );
    expect(readyOf(reported)?.message).toContain('created on east/east-zone');
    expect(reported.status?.placement).toMatchObject({ provider: 'east', failureDomain: 'east-zone' });
    expect(cloud.vms.get(uuid)?.zone).toBe('east-zone');

    await cp.kubectl(['delete', MACHINES, 'md-0', '-n', ns, '--wait=false']);
    await waitFor('md-0 to be gone', async () => !(await get(cp, MACHINES, ns, 'md-0')), 120_000);
    expect(cloud.vms.has(uuid)).toBe(false);
  });

  it('keeps a Provider with VMs on it until their machines are deleted, and deletes the VMs through it', async () => {
    const cp = plane();
    const ns = 'placement-provider';
    await tenant(ns);
    await applyObjects(cp, [machine(ns, 'm2', { failureDomain: 'east-zone' })]);
    const { uuid } = await provisioned(ns, 'm2');

    await cp.kubectl(['delete', PROVIDERS, 'east', '-n', ns, '--wait=false']);
    const held = await waitFor(
      'Provider east to say it is in use',
      async () => {
        const p = await get(cp, PROVIDERS, ns, 'east');
        return p?.metadata.deletionTimestamp && (await eventReasons(cp, ns, 'east')).includes('ProviderInUse') ? p : undefined;
      },
      60_000,
    );
    expect(held.metadata.finalizers).toContain('banlieue.io/provider-in-use');
    // West holds no machine: it goes at once.
    await cp.kubectl(['delete', PROVIDERS, 'west', '-n', ns, '--timeout=60s']);

    await cp.kubectl(['delete', MACHINES, 'm2', '-n', ns, '--wait=false']);
    await waitFor('m2 and Provider east to be gone', async () => !(await get(cp, MACHINES, ns, 'm2')) && !(await get(cp, PROVIDERS, ns, 'east')), 120_000);
    expect(cloud.vms.has(uuid)).toBe(false);
  });

  it('recreates a VirtualMachine whose placement drifted: its VM deleted where it was created, the new one created at the fresh placement', async () => {
    const cp = plane();
    const ns = 'placement-vm';
    const capabilities = { storageClasses: [{ name: 'fast', target: { pool: 'p1' } }], networkClasses: [{ name: 'lan', target: { bridge: 'br0' } }] };
    const withClasses = (name: string): object => ({
      ...(provider(ns, name) as { spec: object }),
      spec: { ...(provider(ns, name) as { spec: object }).spec, capabilities },
    });
    await cp.kubectl(['create', 'namespace', ns]);
    await applyObjects(cp, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: ns }, stringData: { token: 's3cr3t' } },
      withClasses('east'),
      withClasses('west'),
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VMClass',
        metadata: { name: 'placement-small' },
        spec: {
          hardware: { cpus: 1, memoryMiB: 512, disks: [{ name: 'os', sizeGiB: 10, storageClass: 'fast' }] },
          network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
        },
      },
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VMImage',
        metadata: { name: 'placement-linux' },
        spec: {
          osFamily: 'linux',
          osDistribution: 'debian',
          osVersion: '13',
          architecture: 'amd64',
          sources: [{ providerClass: 'fake', kind: 'Template', ref: 'debian-13' }],
        },
      },
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'web', namespace: ns },
        spec: { classRef: { name: 'placement-small' }, imageRef: { name: 'placement-linux' }, migrationPolicy: 'automatic' },
      },
    ]);
    const { live, uuid } = await provisioned(ns, 'web');
    const first = live.status?.placement?.provider ?? '';
    const other = first === 'east' ? 'west' : 'east';
    expect(cloud.vms.get(uuid)?.zone).toBe(`${first}-zone`);

    // Its user asks for the other Provider's failure domain: where it runs is excluded.
    await cp.kubectl([
      'patch',
      'virtualmachines.banlieue.io',
      'web',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { placement: { failureDomainSelector: { matchLabels: { name: `${other}-zone` } } } } }),
    ]);
    const moved = await waitFor(
      `web to be provisioned again on ${other}`,
      async () => {
        const m = await get(cp, MACHINES, ns, 'web');
        return m?.status?.initialization?.provisioned === true && m.status.placement?.provider === other ? m : undefined;
      },
      120_000,
    );
    expect(moved.status?.placement).toMatchObject({ provider: other, failureDomain: `${other}-zone` });
    expect(cloud.destroyed).toContainEqual({ uuid, zone: `${first}-zone` });
    expect(cloud.vms.get(uuid)?.zone).toBe(`${other}-zone`);

    await cp.kubectl(['delete', 'virtualmachines.banlieue.io', 'web', '-n', ns, '--wait=false']);
    await waitFor('web to be gone', async () => !(await get(cp, MACHINES, ns, 'web')) && !(await get(cp, 'virtualmachines.banlieue.io', ns, 'web')), 120_000);
    expect(cloud.vms.has(uuid)).toBe(false);
  });

  it('finishes deleting a machine whose failure domain was never published, saying nothing was created', async () => {
    const cp = plane();
    const ns = 'placement-never';
    await tenant(ns);
    await applyObjects(cp, [machine(ns, 'm3', { providerRef: { name: 'east' }, failureDomain: 'nowhere-zone' })]);
    await waitFor(
      'm3 to report its failure domain unpublished',
      async () => {
        const m = await get(cp, MACHINES, ns, 'm3');
        return readyOf(m)?.reason === 'FailureDomainNotFound' && m?.spec.providerID !== undefined;
      },
      60_000,
    );
    const vmsBefore = cloud.vms.size;

    await cp.kubectl(['delete', MACHINES, 'm3', '-n', ns, '--wait=false']);
    await waitFor('m3 to be gone', async () => !(await get(cp, MACHINES, ns, 'm3')), 60_000);
    expect(await eventReasons(cp, ns, 'm3')).toContain('NothingCreated');
    expect(cloud.vms.size).toBe(vmsBefore);
  });
});
