// Addresses from CAPI IPAM pools: a machine NIC's `addressesFromPools` becomes
// an IPAddressClaim owned by the machine; the test plays the IPAM provider (it
// writes the IPAddress and the claim's status.addressRef, as
// cluster-api-ipam-provider-in-cluster does) against CAPI's own IPAM CRDs from
// the pinned CAPI module. The provider role is the real one, over the test-only
// fake backend, whose VMs keep the network configuration they were created
// with.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTools, type ControlPlane } from '../support/control-plane.js';
import { fakeDescriptor } from '../support/fake-backend/descriptor.js';
import { runFakeRoles } from '../support/fake-backend/roles.js';
import { FakeCloud } from '../support/fake-backend/fake-cloud.js';
import { FakeMachineKind } from '../support/fake-backend/fake-machine.js';
import { installFakeBackend } from '../support/fake-backend/install.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { waitFor } from '../support/wait.js';

const NS = 'ipam-tenant';
const FAKE_MACHINES = 'fakemachines.infrastructure.banlieue.io';
const CLAIMS = 'ipaddressclaims.ipam.cluster.x-k8s.io';
const POOL = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'nodes' };

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message?: string;
}

interface Live {
  readonly metadata: { readonly uid?: string; readonly labels?: Record<string, string>; readonly ownerReferences?: readonly Record<string, unknown>[] };
  readonly spec: Record<string, unknown> & { readonly providerID?: string };
  readonly status?: Record<string, unknown> & {
    readonly initialization?: { readonly provisioned?: boolean };
    readonly conditions?: readonly Condition[];
    readonly addresses?: unknown[];
  };
}

async function get(cp: ControlPlane, resource: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', NS, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

const readyOf = (live: Live | undefined): Condition | undefined => live?.status?.conditions?.find((c) => c.type === 'Ready');

/** A FakeMachine whose one NIC takes its address from POOL (or by DHCP when `pooled` is false). */
const fakeMachine = (name: string, pooled: boolean): object => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: FakeMachineKind.kind,
  metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'work' } },
  spec: {
    providerRef: { name: 'lab' },
    image: 'debian-13',
    cpus: 1,
    memoryMiB: 512,
    network: [{ name: 'eth0', ...(pooled ? { ipam: { addressesFromPools: [POOL] } } : {}) }],
  },
});

describe('addresses from CAPI IPAM pools', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(500);
  let stopRole: () => Promise<void>;

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    await cp.kubectl(['create', 'namespace', NS]);
    await applyObjects(cp, [
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'fake-creds', namespace: NS }, stringData: { token: 's3cr3t' } },
      {
        apiVersion: 'banlieue.io/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'lab', namespace: NS },
        spec: { providerClassRef: { name: 'fake' }, connection: { endpoint: 'https://fake.invalid', credentialsRef: { name: 'fake-creds' } } },
      },
    ]);
    // CAPI's IPAM CRDs are not installed yet: the role must start without them.
    stopRole = runFakeRoles(cp.kubeconfigPath, fakeDescriptor(cloud), { controller: false });
  }, 180_000);

  afterAll(() => stopRole());

  it('refuses addressesFromPools together with a static address', async () => {
    const cp = plane();
    const both = {
      ...fakeMachine('both', true),
      spec: {
        image: 'debian-13',
        cpus: 1,
        memoryMiB: 512,
        network: [{ name: 'eth0', ipam: { static: { address: '10.0.0.9', prefix: 24 }, addressesFromPools: [POOL] } }],
      },
    };
    await expect(applyObjects(cp, [both])).rejects.toThrow(/static and addressesFromPools are exclusive/);
  });

  it("runs machines without pools while CAPI's IPAM CRDs are absent, and says so on a machine with one", async () => {
    const cp = plane();
    await applyObjects(cp, [fakeMachine('plain', false), fakeMachine('pooled', true)]);
    const plain = await waitFor(
      'the machine without pools to be provisioned',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'plain');
        return live?.status?.initialization?.provisioned === true ? live : undefined;
      },
      120_000,
    );
    expect(plain.status?.addresses).toEqual([{ type: 'InternalIP', address: expect.stringMatching(/^192\.0\.2\./) }]);
    const pooled = await waitFor(
      'the pooled machine to say why it waits',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'pooled');
        return readyOf(live)?.reason === 'IPAddressClaimFailed' ? live : undefined;
      },
      120_000,
    );
    expect(readyOf(pooled)).toMatchObject({ status: 'False', message: expect.stringContaining("install Cluster API's IPAM CRDs") });
    expect(pooled.status?.initialization?.provisioned).not.toBe(true);
  });

  it('claims an address owned by the machine, waits for it, and creates the VM with it as its static address', async () => {
    const cp = plane();
    const bases = join((await buildTools()).capiModuleDir, 'core/config/crd/bases');
    for (const kind of ['ipaddressclaims', 'ipaddresses'])
      await cp.kubectl(['apply', '--server-side', '-f', join(bases, `ipam.cluster.x-k8s.io_${kind}.yaml`)]);
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${CLAIMS}`, 'crd/ipaddresses.ipam.cluster.x-k8s.io']);

    const claim = await waitFor('the IPAddressClaim of NIC 0, pool 0', () => get(cp, CLAIMS, 'pooled-0-0'), 120_000);
    const machine = await get(cp, FAKE_MACHINES, 'pooled');
    expect(claim.spec).toEqual({ poolRef: POOL, clusterName: 'work' });
    expect(claim.metadata.labels).toMatchObject({ 'cluster.x-k8s.io/cluster-name': 'work' });
    expect(claim.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'infrastructure.banlieue.io/v1alpha1',
        kind: 'FakeMachine',
        name: 'pooled',
        uid: machine?.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const waiting = await waitFor(
      'Ready to say WaitingForIPAddress',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'pooled');
        return readyOf(live)?.reason === 'WaitingForIPAddress' ? live : undefined;
      },
      60_000,
    );
    expect(readyOf(waiting)?.message).toContain('IPAddressClaim pooled-0-0');
    expect([...cloud.vms.values()].map((vm) => vm.name)).toEqual(['plain']);

    // The IPAM provider's part: an IPAddress for the claim, then the claim's status names it.
    await applyObjects(cp, [
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: 'pooled-0-0', namespace: NS },
        spec: { address: '10.0.0.15', prefix: 24, gateway: '10.0.0.1', claimRef: { name: 'pooled-0-0' }, poolRef: POOL },
      },
    ]);
    await cp.kubectl([
      'patch',
      CLAIMS,
      'pooled-0-0',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { addressRef: { name: 'pooled-0-0' } } }),
    ]);

    const provisioned = await waitFor(
      'the pooled machine to be provisioned',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'pooled');
        return live?.status?.initialization?.provisioned === true ? live : undefined;
      },
      120_000,
    );
    expect(provisioned.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.15' }]);
    const vm = cloud.vms.get(String(provisioned.spec.providerID).slice('fake://'.length));
    expect(vm?.network).toEqual([{ name: 'eth0', ipam: { static: { address: '10.0.0.15', prefix: 24, gateway: '10.0.0.1' } } }]);
    // The spec keeps naming the pool: the address is the claim's, not the machine's to keep.
    expect(provisioned.spec.network).toEqual([{ name: 'eth0', ipam: { addressesFromPools: [POOL] } }]);
  });

  it('takes no address from a claim of its name that it does not control', async () => {
    const cp = plane();
    // Written before the machine, e.g. by another tenant of the namespace, already bound to an address.
    await applyObjects(cp, [
      { apiVersion: 'ipam.cluster.x-k8s.io/v1beta2', kind: 'IPAddressClaim', metadata: { name: 'squatted-0-0', namespace: NS }, spec: { poolRef: POOL } },
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: 'squatted-0-0', namespace: NS },
        spec: { address: '10.0.0.99', prefix: 24, claimRef: { name: 'squatted-0-0' }, poolRef: POOL },
      },
    ]);
    await cp.kubectl([
      'patch',
      CLAIMS,
      'squatted-0-0',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { addressRef: { name: 'squatted-0-0' } } }),
    ]);
    await applyObjects(cp, [fakeMachine('squatted', true)]);
    const refused = await waitFor(
      'the machine to refuse the claim',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'squatted');
        return readyOf(live)?.reason === 'IPAddressClaimFailed' ? live : undefined;
      },
      120_000,
    );
    expect(readyOf(refused)?.message).toContain(
      'IPAddressClaim squatted-0-0 (spec.network[0].ipam.addressesFromPools[0]): exists and is not controlled by this machine',
    );
    expect([...cloud.vms.values()].map((vm) => vm.name)).not.toContain('squatted');
    // Deleting the machine leaves the claim it does not control.
    await cp.kubectl(['delete', FAKE_MACHINES, 'squatted', '-n', NS, '--wait=false']);
    await waitFor('the machine to be gone', async () => !(await get(cp, FAKE_MACHINES, 'squatted')), 120_000);
    expect(await get(cp, CLAIMS, 'squatted-0-0')).toBeDefined();
  });

  it('deletes the claims when the machine is deleted, after its VM', async () => {
    const cp = plane();
    const machine = await get(cp, FAKE_MACHINES, 'pooled');
    const uuid = String(machine?.spec.providerID).slice('fake://'.length);
    await cp.kubectl(['delete', FAKE_MACHINES, 'pooled', '-n', NS, '--wait=false']);
    await waitFor('the machine to be gone', async () => !(await get(cp, FAKE_MACHINES, 'pooled')), 120_000);
    expect(cloud.vms.has(uuid)).toBe(false);
    await waitFor('its IPAddressClaim to be gone', async () => !(await get(cp, CLAIMS, 'pooled-0-0')), 60_000);
    const events = JSON.parse(await cp.kubectl(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as {
      items: { reason?: string; regarding?: { name?: string }; note?: string }[];
    };
    expect(events.items.filter((e) => e.regarding?.name === 'pooled' && e.reason === 'IPAddressesReleased').map((e) => e.note)).toEqual([
      'Deleted IPAddressClaims pooled-0-0',
    ]);
  });
});
