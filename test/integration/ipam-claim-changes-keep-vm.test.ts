// An address from a CAPI IPAM pool is guest data of a VM's first boot: what
// happens to the machine's IPAddressClaim afterwards (deleted, bound again to
// another address) never re-creates or destroys its VM
// (docs/adr/0022-when-banlieue-destroys-a-vm.md, row 18). A control plane of
// the suite's own, with CAPI's IPAM CRDs from the pinned CAPI module; the real
// `banlieue provider vsphere` on vcsim; the test plays the IPAM provider.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { buildTools, type ControlPlane } from '../support/control-plane.js';
import { startRole } from '../support/controller-process.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const NS = 'ipam-keeps-vm';
const CLAIMS = 'ipaddressclaims.ipam.cluster.x-k8s.io';
const POOL = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool', name: 'nodes' };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function get(cp: ControlPlane, resource: string, name: string): Promise<Json | undefined> {
  return cp.kubectl(['get', resource, name, '-n', NS, '-o', 'json']).then(
    (o) => JSON.parse(o) as Json,
    (err: Error) => {
      if (/\(NotFound\)/.test(err.message)) return undefined;
      throw err;
    },
  );
}

const readyOf = (o: Json | undefined): Json | undefined => o?.status?.conditions?.find((c: Json) => c.type === 'Ready');

/** The IPAM provider's answer to the machine's claim: an IPAddress, and the claim's status naming it. */
async function bindClaim(cp: ControlPlane, address: string): Promise<void> {
  await waitFor('the IPAddressClaim of NIC 0, pool 0', () => get(cp, CLAIMS, 'pooled-0-0'), 120_000);
  await applyObjects(cp, [
    {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: { name: 'pooled-0-0', namespace: NS },
      spec: { address, prefix: 24, gateway: '10.0.0.1', claimRef: { name: 'pooled-0-0' }, poolRef: POOL },
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
}

describe("a provisioned machine's IPAddressClaim changing (vcsim)", () => {
  const { plane, track } = usePrivatePlane();
  let vcsim: Vcsim;
  let client: VsphereClient;

  beforeAll(async () => {
    const cp = plane();
    const bases = join((await buildTools()).capiModuleDir, 'core/config/crd/bases');
    for (const kind of ['ipaddressclaims', 'ipaddresses'])
      await cp.kubectl(['apply', '--server-side', '-f', join(bases, `ipam.cluster.x-k8s.io_${kind}.yaml`)]);
    await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', `crd/${CLAIMS}`, 'crd/ipaddresses.ipam.cluster.x-k8s.io']);
    vcsim = await startVcsim({ datacenters: 1, clusters: 1 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
    await cp.kubectl(['create', 'namespace', NS]);
    const world = vsphereWorld(NS, vcsim, 'ipam', 'ubuntu-2404');
    await applyObjects(cp, [world.secret, world.provider, world.vmImage]);
  }, 300_000);

  afterAll(async () => {
    await client?.close();
    await vcsim?.stop();
  });

  it('keeps the VM it has, the same one, while its claim is deleted, made again and bound to another address', async () => {
    const cp = plane();
    const provider = track(
      await startRole([
        'provider',
        'vsphere',
        '--kubeconfig',
        cp.kubeconfigPath,
        '--no-leader-elect',
        '--namespace',
        NS,
        '--poll-period',
        '1',
        '--rediscover-period',
        '5',
        '--resync-period',
        '2',
      ]),
    );
    const failureDomain = await waitFor(
      'the Provider to discover vcsim',
      async () => (await get(cp, 'providers.banlieue.io', 'vcsim'))?.status?.failureDomains?.[0]?.name as string | undefined,
      90_000,
    );
    await applyObjects(cp, [
      {
        apiVersion: 'infrastructure.banlieue.io/v1alpha1',
        kind: 'VSphereMachine',
        metadata: { name: 'pooled', namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'work' } },
        spec: {
          providerRef: { name: 'vcsim' },
          failureDomain,
          template: 'ubuntu-2404',
          numCpus: 1,
          memoryMiB: 512,
          network: [{ name: 'eth0', portGroup: 'VM Network', ipam: { addressesFromPools: [POOL] } }],
        },
      },
    ]);
    await bindClaim(cp, '10.0.0.15');
    const machine = await waitFor(
      'the machine to be provisioned',
      async () => {
        const live = await get(cp, 'vspheremachines', 'pooled');
        return live?.status?.initialization?.provisioned === true ? live : undefined;
      },
      120_000,
    );
    const uuid = uuidOf(machine.spec.providerID as string);
    expect(await playTools(client, uuid, '10.0.0.15')).toBe(true);
    const clones = await provider.metric('banlieue_backend_calls_total', { backend: 'vsphere', method: 'CloneVM_Task' });

    // The claim and its address go (a user, or the pool being re-made).
    await cp.kubectl(['delete', CLAIMS, 'pooled-0-0', '-n', NS, '--wait=true']);
    await cp.kubectl(['delete', 'ipaddresses.ipam.cluster.x-k8s.io', 'pooled-0-0', '-n', NS, '--wait=true']);
    const waiting = await waitFor(
      'the machine to wait for an address again',
      async () => {
        const live = await get(cp, 'vspheremachines', 'pooled');
        return readyOf(live)?.reason === 'WaitingForIPAddress' ? live : undefined;
      },
      60_000,
    );
    expect(waiting.metadata.uid).toBe(machine.metadata.uid);
    const found = await client.search.findVmByBiosUuid(uuid);
    if (!found) throw new Error('the VM is gone');
    expect((await client.vms.summary(found)).powerState).toBe('poweredOn');

    // Bound again, to another address: the VM stays the one it was.
    await bindClaim(cp, '10.0.0.16');
    await waitFor(
      'the machine to be Ready again',
      async () => (readyOf(await get(cp, 'vspheremachines', 'pooled'))?.status === 'True' ? true : undefined),
      60_000,
    );
    expect(await client.search.findVmByBiosUuid(uuid)).toEqual(found);
    expect(await provider.metric('banlieue_backend_calls_total', { backend: 'vsphere', method: 'CloneVM_Task' })).toBe(clones);
  }, 300_000);
});
