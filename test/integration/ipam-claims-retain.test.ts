// A machine deleted with spec.deletionPolicy Retain keeps its IPAddressClaims:
// its VM stays on the backend with the address its claim was bound to, so the
// claim outlives the machine (its owner reference removed, so the garbage
// collector leaves it) and the VMRetained Event names it. The provider role is
// the real one, over the test-only fake backend; the test plays the IPAM
// provider against CAPI's own IPAM CRDs, as ipam-claims.test.ts does.
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

const NS = 'ipam-retain';
const FAKE_MACHINES = 'fakemachines.infrastructure.banlieue.io';
const CLAIMS = 'ipaddressclaims.ipam.cluster.x-k8s.io';
const POOL = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'nodes' };

interface Live {
  readonly metadata: { readonly uid?: string; readonly ownerReferences?: readonly Record<string, unknown>[] };
  readonly spec: Record<string, unknown>;
  readonly status?: { readonly initialization?: { readonly provisioned?: boolean } };
}

async function get(cp: ControlPlane, resource: string, name: string): Promise<Live | undefined> {
  try {
    return JSON.parse(await cp.kubectl(['get', resource, name, '-n', NS, '-o', 'json'])) as Live;
  } catch {
    return undefined;
  }
}

describe('IPAddressClaims of a machine deleted with deletionPolicy Retain', () => {
  const { plane } = usePrivatePlane();
  const cloud = new FakeCloud(500);
  let stopRole: () => Promise<void>;

  beforeAll(async () => {
    const cp = plane();
    await installFakeBackend(cp);
    const bases = join((await buildTools()).capiModuleDir, 'core/config/crd/bases');
    for (const kind of ['ipaddressclaims', 'ipaddresses'])
      await cp.kubectl(['apply', '--server-side', '-f', join(bases, `ipam.cluster.x-k8s.io_${kind}.yaml`)]);
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${CLAIMS}`, 'crd/ipaddresses.ipam.cluster.x-k8s.io']);
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
    stopRole = runFakeRoles(cp.kubeconfigPath, fakeDescriptor(cloud), { controller: false });
  }, 180_000);

  afterAll(() => stopRole());

  it('keeps the claim, no longer owned by the machine, with its address, and names it in the VMRetained Event', async () => {
    const cp = plane();
    await applyObjects(cp, [
      {
        apiVersion: 'infrastructure.banlieue.io/v1alpha1',
        kind: FakeMachineKind.kind,
        metadata: { name: 'kept', namespace: NS },
        spec: {
          providerRef: { name: 'lab' },
          image: 'debian-13',
          cpus: 1,
          memoryMiB: 512,
          deletionPolicy: 'Retain',
          network: [{ name: 'eth0', ipam: { addressesFromPools: [POOL] } }],
        },
      },
    ]);
    await waitFor('the IPAddressClaim of NIC 0, pool 0', () => get(cp, CLAIMS, 'kept-0-0'), 120_000);
    // The IPAM provider's part: an IPAddress for the claim, then the claim's status names it.
    await applyObjects(cp, [
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddress',
        metadata: { name: 'kept-0-0', namespace: NS },
        spec: { address: '10.0.0.16', prefix: 24, claimRef: { name: 'kept-0-0' }, poolRef: POOL },
      },
    ]);
    await cp.kubectl([
      'patch',
      CLAIMS,
      'kept-0-0',
      '-n',
      NS,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { addressRef: { name: 'kept-0-0' } } }),
    ]);
    const machine = await waitFor(
      'the machine to be provisioned',
      async () => {
        const live = await get(cp, FAKE_MACHINES, 'kept');
        return live?.status?.initialization?.provisioned === true ? live : undefined;
      },
      120_000,
    );
    const uuid = String(machine.spec.providerID).slice('fake://'.length);

    await cp.kubectl(['delete', FAKE_MACHINES, 'kept', '-n', NS, '--wait=false']);
    await waitFor('the machine to be gone', async () => !(await get(cp, FAKE_MACHINES, 'kept')), 120_000);

    expect(cloud.vms.has(uuid)).toBe(true);
    const claim = await get(cp, CLAIMS, 'kept-0-0');
    expect(claim?.metadata.ownerReferences ?? []).toEqual([]);
    expect(await get(cp, 'ipaddresses.ipam.cluster.x-k8s.io', 'kept-0-0')).toBeDefined();
    const events = await waitFor(
      'the VMRetained Event',
      async () => {
        const list = JSON.parse(await cp.kubectl(['get', 'events.events.k8s.io', '-n', NS, '-o', 'json'])) as {
          items: { reason?: string; regarding?: { name?: string }; note?: string }[];
        };
        const retained = list.items.filter((e) => e.regarding?.name === 'kept' && e.reason === 'VMRetained');
        return retained.length > 0 ? retained : undefined;
      },
      60_000,
    );
    expect(events.map((e) => e.note)).toEqual([
      `Retained VM fake-${uuid} (UUID ${uuid}) on Provider lab as it is (deletionPolicy Retain): its banlieue ownership mark is removed and banlieue no longer manages it; its IPAddressClaims kept-0-0 are kept, their addresses still allocated (delete them once the VM no longer needs them)`,
    ]);
  });
});
