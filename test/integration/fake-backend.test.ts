// A backend that exists only in this test (test/support/fake-backend/) runs a
// VirtualMachine from Pending to Ready through the real controller and
// provider-role code against a real apiserver. Registering it is all it takes:
// no reconciler, runtime or scheduler file knows it (docs/adr/0014).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTools, type ControlPlane } from '../support/control-plane.js';
import { fakeLab } from '../support/fake-backend/lab.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { FakeMachineKind } from '../support/fake-backend/fake-machine.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const NS = 'fake-tenant';
/** Where the CAPI-owned machines of this suite live. */
const CAPI_NS = 'fake-capi';

interface Live {
  metadata?: { uid?: string };
  spec: Record<string, unknown> & { providerID?: string };
  status?: Record<string, unknown> & {
    taskRef?: string;
    failureDomain?: string;
    initialization?: { provisioned?: boolean };
    conditions?: { type: string; status: string; reason: string; message?: string }[];
    addresses?: unknown[];
  };
}

async function get(cp: ControlPlane, resource: string, name: string, ns = NS): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', ns, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const readyOf = (live: Live | undefined): { status: string; reason: string; message?: string } | undefined =>
  live?.status?.conditions?.find((c) => c.type === 'Ready');

describe('a backend registered only in a test', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(3_000);
  const fake = fakeDescriptor(cloud);
  let stopRoles: () => Promise<void>;

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    stopRoles = runFakeRoles(cp.kubeconfigPath, fake, { concurrency: 4 });
  });

  afterAll(() => stopRoles());

  it('runs a VirtualMachine from Pending to Ready, remembering the create task on the way', async () => {
    const cp = plane();
    await cp.kubectl(['create', 'namespace', NS]);
    await applyObjects(cp, [
      ...fakeLab(NS),
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'VirtualMachine',
        metadata: { name: 'web-1', namespace: NS },
        spec: { classRef: { name: 'fake-small' }, imageRef: { name: 'fake-linux' } },
      },
    ]);

    // The create task runs 3 s: the provider records it and returns instead of waiting on it.
    const inFlight = await waitFor(
      'the FakeMachine to record its create task',
      async () => {
        const machine = await get(cp, 'fakemachines.infrastructure.banlieue.io', 'web-1');
        return machine?.status?.taskRef ? machine : undefined;
      },
      120_000,
    );
    expect(inFlight.spec.providerID).toMatch(/^fake:\/\/[0-9a-f-]{36}$/);
    expect(inFlight.status?.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'Provisioning' }));

    const vm = await waitFor(
      'the VirtualMachine to be Ready',
      async () => {
        const live = await get(cp, 'virtualmachines.banlieue.io', 'web-1');
        return live?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? live : undefined;
      },
      120_000,
    );
    const machine = await get(cp, 'fakemachines.infrastructure.banlieue.io', 'web-1');
    expect(machine?.spec).toMatchObject({ image: 'debian-13', cpus: 2, memoryMiB: 1024, providerRef: { name: 'lab' }, failureDomain: 'lab-zone' });
    expect(machine?.status).toMatchObject({ initialization: { provisioned: true }, observedPowerState: 'PoweredOn', vmRef: expect.stringMatching(/^fake-/) });
    expect(machine?.status?.taskRef).toBeUndefined();
    expect(vm.status?.addresses).toEqual([{ type: 'InternalIP', address: expect.stringMatching(/^192\.0\.2\./) }]);
    const uuid = String(machine?.spec.providerID).slice('fake://'.length);
    expect([...cloud.vms.keys()]).toEqual([uuid]);
    expect(cloud.calls.filter((c) => c === 'startCreate')).toHaveLength(1);
  });

  describe('a machine of a CAPI Machine', () => {
    const MACHINE = 'md-0-abcde';
    const FAKE_MACHINES = 'fakemachines.infrastructure.banlieue.io';

    beforeAll(async () => {
      const cp = plane();
      // CAPI's own Machine kind, as CAPI ships it.
      await cp.kubectl(['apply', '--server-side', '-f', join((await buildTools()).capiModuleDir, 'core/config/crd/bases/cluster.x-k8s.io_machines.yaml')]);
      await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/machines.cluster.x-k8s.io']);
      await cp.kubectl(['create', 'namespace', CAPI_NS]);
      // Two Providers of the fake backend: their failure domains are east-zone and west-zone.
      const fakeProvider = (name: string): object => ({
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'Provider',
        metadata: { name, namespace: CAPI_NS },
        spec: { providerClassRef: { name: 'fake' }, connection: { endpoint: `https://${name}.fake.invalid`, credentialsRef: { name: 'fake-creds' } } },
      });
      await applyObjects(cp, [
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: CAPI_NS }, stringData: { token: 's3cr3t' } },
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: `${MACHINE}-bootstrap`, namespace: CAPI_NS },
          stringData: { value: '#cloud-config\n', format: 'cloud-config' },
        },
        fakeProvider('east'),
        fakeProvider('west'),
        {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Machine',
          metadata: { name: MACHINE, namespace: CAPI_NS },
          spec: {
            clusterName: 'work',
            failureDomain: 'east-zone',
            bootstrap: { dataSecretName: `${MACHINE}-bootstrap` },
            infrastructureRef: { apiGroup: 'infrastructure.banlieue.io', kind: FakeMachineKind.kind, name: MACHINE },
          },
        },
      ]);
    }, 180_000);

    it("runs in the owning Machine's failure domain, not in the one its own spec.failureDomain names", async () => {
      const cp = plane();
      const owner = await get(cp, 'machines.cluster.x-k8s.io', MACHINE, CAPI_NS);
      // As CAPI clones it from a template that names a failure domain, then claims it for the Machine.
      await applyObjects(cp, [
        {
          apiVersion: 'infrastructure.banlieue.io/v1alpha1',
          kind: FakeMachineKind.kind,
          metadata: {
            name: MACHINE,
            namespace: CAPI_NS,
            labels: { 'cluster.x-k8s.io/cluster-name': 'work' },
            ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: MACHINE, uid: owner?.metadata?.uid ?? '', controller: true }],
          },
          spec: { failureDomain: 'west-zone', image: 'debian-13', cpus: 1, memoryMiB: 512 },
        },
      ]);
      const provisioned = await waitFor(
        'the FakeMachine to be provisioned',
        async () => {
          const live = await get(cp, FAKE_MACHINES, MACHINE, CAPI_NS);
          return live?.status?.initialization?.provisioned === true ? live : undefined;
        },
        120_000,
      );
      expect(provisioned.status?.failureDomain).toBe('east-zone');
      expect(provisioned.spec.failureDomain).toBe('west-zone');
    });

    it('keeps Ready up to date while the VM is being deleted: Deleting, with what it waits for, until the VM is gone', async () => {
      const cp = plane();
      const before = await get(cp, FAKE_MACHINES, MACHINE, CAPI_NS);
      const uuid = String(before?.spec.providerID).slice('fake://'.length);
      expect(cloud.vms.has(uuid)).toBe(true);
      cloud.holdDestroys = true;
      try {
        await cp.kubectl(['delete', FAKE_MACHINES, MACHINE, '-n', CAPI_NS, '--wait=false']);
        const deleting = await waitFor(
          'Ready to say Deleting',
          async () => {
            const live = await get(cp, FAKE_MACHINES, MACHINE, CAPI_NS);
            return readyOf(live)?.reason === 'Deleting' ? live : undefined;
          },
          60_000,
        );
        expect(readyOf(deleting)).toMatchObject({ status: 'False', reason: 'Deleting', message: `destroying the fake VM ${uuid}` });
        expect(cloud.vms.has(uuid)).toBe(true);
      } finally {
        cloud.holdDestroys = false;
      }
      await waitFor('the FakeMachine to be gone', async () => !(await get(cp, FAKE_MACHINES, MACHINE, CAPI_NS)), 120_000);
      expect(cloud.vms.has(uuid)).toBe(false);
    });
  });

  it('destroys the fake VM when the VirtualMachine is deleted', async () => {
    const cp = plane();
    await cp.kubectl(['delete', 'virtualmachines.banlieue.io', 'web-1', '-n', NS, '--wait=false']);
    await waitFor(
      'the VirtualMachine and its FakeMachine to be gone',
      async () => !(await get(cp, 'virtualmachines.banlieue.io', 'web-1')) && !(await get(cp, 'fakemachines.infrastructure.banlieue.io', 'web-1')),
      120_000,
    );
    expect(cloud.vms.size).toBe(0);
  });
});
