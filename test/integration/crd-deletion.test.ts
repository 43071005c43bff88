// Deleting banlieue's CRDs (`clusterctl delete --include-crd`, `kubectl delete
// -f` of the install) makes the API server delete every object of those kinds:
// a request, by whoever may delete CRDs, to delete every VirtualMachine and
// machine, so their VMs go with them unless their deletionPolicy is Retain
// (docs/adr/0022-when-banlieue-destroys-a-vm.md, row 13). A control plane of
// the suite's own (the others share theirs and need the CRDs); the real
// `banlieue controller` and `banlieue provider vsphere` on vcsim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_MARK_KEY } from '../../controller/backends/vsphere/machine/clone-spec.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { startRole } from '../support/controller-process.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const NS = 'crd-deletion';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe("banlieue's CRDs deleted while its roles run (vcsim)", () => {
  const { plane, track } = usePrivatePlane();
  let vcsim: Vcsim;
  let client: VsphereClient;

  beforeAll(async () => {
    vcsim = await startVcsim({ datacenters: 1, clusters: 1 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await vcsim?.stop();
  });

  it('destroys the VM of every VirtualMachine, except one whose deletionPolicy is Retain: left running, without its mark', async () => {
    const cp = plane();
    const list = async (resource: string): Promise<Json[]> =>
      (JSON.parse(await cp.kubectl(['get', resource, '-n', NS, '-o', 'json'])) as { items: Json[] }).items;
    await cp.kubectl(['create', 'namespace', NS]);
    const world = vsphereWorld(NS, vcsim, 'crd', 'ubuntu-2404');
    await applyObjects(cp, [world.secret, world.provider, world.vmClass, world.vmImage]);
    track(await startRole(['controller', '--kubeconfig', cp.kubeconfigPath, '--no-leader-elect', '--namespace', NS]));
    track(
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
      ]),
    );
    const vmOf = (name: string, spec: Json = {}): Json => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VirtualMachine',
      metadata: { name, namespace: NS },
      spec: { classRef: { name: world.vmClass.metadata.name }, imageRef: { name: world.vmImage.metadata.name }, ...spec },
    });
    await applyObjects(cp, [vmOf('deleted'), vmOf('retained', { deletionPolicy: 'Retain' })]);
    const machines = await waitFor(
      'both VMs cloned',
      async () => {
        const all = (await list('vspheremachines')).filter((m) => m.status?.initialization?.provisioned === true);
        return all.length === 2 ? all : undefined;
      },
      120_000,
    );
    const uuids = new Map(machines.map((m) => [m.metadata.name as string, uuidOf(m.spec.providerID as string)]));
    for (const [i, uuid] of [...uuids.values()].entries()) expect(await playTools(client, uuid, `10.87.0.${i + 10}`)).toBe(true);
    await waitFor(
      'both VirtualMachines Ready',
      async () => {
        const all = await list('virtualmachines.banlieue.io');
        return all.length === 2 && all.every((v) => v.status?.conditions?.some((c: Json) => c.type === 'Ready' && c.status === 'True')) ? true : undefined;
      },
      120_000,
    );

    // The uninstall: every CRD of banlieue's API groups.
    const crds = (await cp.kubectl(['get', 'crd', '-o', 'name'])).split('\n').filter((n) => /\.banlieue\.io$/.test(n));
    await cp.kubectl(['delete', ...crds, '--wait=false']);
    await waitFor(
      "banlieue's CRDs to be gone",
      async () => ((await cp.kubectl(['get', 'crd', '-o', 'name'])).split('\n').some((n) => /\.banlieue\.io$/.test(n)) ? undefined : true),
      180_000,
    );

    expect(await client.search.findVmByBiosUuid(uuids.get('deleted') ?? '')).toBeUndefined();
    const kept = await client.search.findVmByBiosUuid(uuids.get('retained') ?? '');
    if (!kept) throw new Error('the retained VM is gone');
    expect((await client.vms.summary(kept)).powerState).toBe('poweredOn');
    expect((await client.vms.extraConfig(kept)).get(OWNER_MARK_KEY) ?? '').toBe('');
  }, 420_000);
});
