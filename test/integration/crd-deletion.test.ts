// Deleting banlieue's CRDs (`clusterctl delete --include-crd`, `kubectl delete
// -f` of the install) makes the API server delete every object of those kinds:
// a request, by whoever may delete CRDs, to delete every VirtualMachine and
// machine, so their VMs go with them unless their deletionPolicy is Retain
// (docs/adr/0022-when-banlieue-destroys-a-vm.md, row 13). A control plane of
// the suite's own (the others share theirs and need the CRDs); the real
// `banlieue controller` and `banlieue provider vsphere` on vcsim. The API
// server deletes each kind's objects and removes its CRD in its own time, in
// no order: a role may see a kind's CRD gone before it saw its objects go.
// A wait that times out says what is left, with finalizers and conditions,
// and what the roles said lately.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_MARK_KEY } from '../../controller/backends/vsphere/machine/clone-spec.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { openApiLink, type ApiLink } from '../support/api-link.js';
import { banlieueCrds, describeBanlieueLeftovers, describeRole } from '../support/banlieue-leftovers.js';
import type { ControlPlane } from '../support/control-plane.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import { applyObjects, usePrivatePlane } from '../support/private-plane-fixtures.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Two VirtualMachines, Ready on vcsim: `deleted` (deletionPolicy Delete) and `retained` (Retain), with their VMs' UUIDs. */
interface Installed {
  readonly roles: { readonly controller: RoleProcess; readonly provider: RoleProcess };
  readonly deleted: string;
  readonly retained: string;
}

describe("banlieue's CRDs deleted while its roles run (vcsim)", () => {
  const { plane, track } = usePrivatePlane();
  let vcsim: Vcsim;
  let client: VsphereClient;
  const links: ApiLink[] = [];

  beforeAll(async () => {
    vcsim = await startVcsim({ datacenters: 1, clusters: 1 });
    client = await vcsimClient(vcsim);
    await makeTemplate(client, 'ubuntu-2404');
  }, 180_000);
  afterAll(async () => {
    await Promise.all(links.map((l) => l.close()));
    await client?.close();
    await vcsim?.stop();
  });

  /**
   * banlieue's CRDs (again, after a test deleted them), a namespace with a vcsim Provider, both roles
   * (the controller through `controllerKubeconfig` when given), and the two VMs cloned and Ready.
   * VM names carry `tag` and guest addresses `subnet`: vcsim keeps the retained VMs of earlier tests.
   */
  async function install(ns: string, tag: string, subnet: number, controllerKubeconfig?: string): Promise<Installed> {
    const cp = plane();
    await applyCrdsFromDist(cp);
    const list = async (resource: string): Promise<Json[]> =>
      (JSON.parse(await cp.kubectl(['get', resource, '-n', ns, '-o', 'json'])) as { items: Json[] }).items;
    await cp.kubectl(['create', 'namespace', ns]);
    const world = vsphereWorld(ns, vcsim, tag, 'ubuntu-2404');
    await applyObjects(cp, [world.secret, world.provider, world.vmClass, world.vmImage]);
    const controller = track(
      await startRole(['controller', '--kubeconfig', controllerKubeconfig ?? cp.kubeconfigPath, '--no-leader-elect', '--namespace', ns]),
    );
    const provider = track(await startRole(providerRoleArgs('vsphere', cp.kubeconfigPath, ns, 5)));
    const vmOf = (name: string, spec: Json = {}): Json => ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VirtualMachine',
      metadata: { name, namespace: ns },
      spec: { classRef: { name: world.vmClass.metadata.name }, imageRef: { name: world.vmImage.metadata.name }, ...spec },
    });
    const [deleted, retained] = [`deleted-${tag}`, `retained-${tag}`];
    await applyObjects(cp, [vmOf(deleted), vmOf(retained, { deletionPolicy: 'Retain' })]);
    const machines = await waitFor(
      'both VMs cloned',
      async () => {
        const all = (await list('vspheremachines')).filter((m) => m.status?.initialization?.provisioned === true);
        return all.length === 2 ? all : undefined;
      },
      120_000,
    );
    const uuids = new Map(machines.map((m) => [m.metadata.name as string, uuidOf(m.spec.providerID as string)]));
    for (const [i, uuid] of [...uuids.values()].entries()) expect(await playTools(client, uuid, `10.87.${subnet}.${i + 10}`)).toBe(true);
    await waitFor(
      'both VirtualMachines Ready',
      async () => {
        const all = await list('virtualmachines.banlieue.io');
        return all.length === 2 && all.every((v) => v.status?.conditions?.some((c: Json) => c.type === 'Ready' && c.status === 'True')) ? true : undefined;
      },
      120_000,
    );
    return { roles: { controller, provider }, deleted: uuids.get(deleted) ?? '', retained: uuids.get(retained) ?? '' };
  }

  /**
   * The uninstall: every CRD of banlieue's API groups, deleted as `kubectl delete` does, without waiting.
   * Each kind is listed once first, as in any cluster that served it: the API server builds a kind's
   * storage on its first request, and for a kind nobody read (no role watches the *ClusterTemplates)
   * that is the CRD finalizer's own list, refused while the storage fills ("storage is
   * (re)initializing"); on a busy API server the finalizer's retry can then wait for its 5-minute
   * resync (its retry reads a CRD older than its own status write and ends on the conflict).
   */
  async function deleteCrds(cp: ControlPlane): Promise<string[]> {
    const all = await banlieueCrds(cp);
    await Promise.all(all.map((c) => cp.kubectl(['get', `${c.spec.names.plural as string}.${c.spec.group as string}`, '--all-namespaces', '-o', 'name'])));
    const crds = all.map((c) => `crd/${c.metadata.name as string}`);
    await cp.kubectl(['delete', ...crds, '--wait=false']);
    return crds;
  }

  /** Until none of the CRDs `matching` is left; on timeout, the error says what is left and what the roles said lately. */
  async function waitForCrdsGone(cp: ControlPlane, what: string, timeoutMs: number, installed: Installed, matching = /./): Promise<void> {
    try {
      await waitFor(what, async () => ((await banlieueCrds(cp)).some((c) => matching.test(c.metadata.name as string)) ? undefined : true), timeoutMs);
    } catch (err) {
      const said = Object.entries(installed.roles).map(([name, role]) => `The ${name} role, lately:\n${describeRole(role)}`);
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nWhat is left:\n${await describeBanlieueLeftovers(cp)}\n${said.join('\n')}`, {
        cause: err,
      });
    }
  }

  /** The Delete VM is gone; the Retain one runs on, without banlieue's mark. */
  async function expectFates(installed: Installed): Promise<void> {
    expect(await client.search.findVmByBiosUuid(installed.deleted)).toBeUndefined();
    const kept = await client.search.findVmByBiosUuid(installed.retained);
    if (!kept) throw new Error('the retained VM is gone');
    expect((await client.vms.summary(kept)).powerState).toBe('poweredOn');
    expect((await client.vms.extraConfig(kept)).get(OWNER_MARK_KEY) ?? '').toBe('');
  }

  it('destroys the VM of every VirtualMachine, except one whose deletionPolicy is Retain: left running, without its mark', async () => {
    const cp = plane();
    const installed = await install('crd-deletion', 'a', 0);
    await deleteCrds(cp);
    await waitForCrdsGone(cp, "banlieue's CRDs to be gone", 180_000, installed);
    await expectFates(installed);
  }, 420_000);

  it('finishes when the machine kinds are gone before the controller saw their objects go: it lets the VirtualMachines go', async () => {
    const cp = plane();
    // The controller's own way to the API server: cut, it sees none of the deletions, as when the
    // API server closed its watches before it sent them.
    const link = await openApiLink(cp.kubeconfigPath);
    links.push(link);
    const installed = await install('crd-deletion-unseen', 'b', 1, link.kubeconfigPath);
    link.cut();
    await deleteCrds(cp);
    // The provider role destroys the Delete VM and releases the Retain one; the API server then removes
    // the machines' CRDs, while the VirtualMachines wait for the controller.
    await waitForCrdsGone(cp, 'the machine kinds to be gone', 180_000, installed, /\.infrastructure\.banlieue\.io$/);
    expect((await banlieueCrds(cp)).map((c) => c.metadata.name as string)).toContain('virtualmachines.banlieue.io');
    link.restore();
    await waitForCrdsGone(cp, "banlieue's CRDs to be gone", 180_000, installed);
    await expectFates(installed);
  }, 600_000);
});
