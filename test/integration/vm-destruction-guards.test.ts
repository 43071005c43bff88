// What may destroy a user's VM (docs/adr/0022-when-banlieue-destroys-a-vm.md):
// only a deletion someone allowed to delete asked for. Each case runs the real
// `banlieue controller` and `banlieue provider` against the real API server
// (its garbage collector and namespace controller included) and a real peer,
// vcsim or libvirtd's test driver, in a namespace of its own, and reads what a
// user would: the objects through the API server, the VMs in the backend by
// their UUID.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { OWNER_MARK_KEY } from '../../controller/backends/vsphere/machine/clone-spec.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { eventsWhere } from '../support/events.js';
import { createNamespace } from '../support/kube.js';
import {
  domainOf,
  libvirtProviderArgs,
  libvirtUuidOf,
  libvirtVm,
  startLibvirtEnv,
  stopLibvirtEnv,
  volumesOf,
  type LibvirtEnv,
} from '../support/libvirt/env.js';
import { providerArgs, providerIdOf, readyWithAddress, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { playTools, vmsNamed, vsphereWorld } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();

/** Resolves once `role` has made `count` more backend calls of `method`: that many more passes looked at the backend. */
async function afterCalls(role: RoleProcess, backend: string, method: string, count: number, timeoutMs = 60_000): Promise<void> {
  const start = await role.metric('banlieue_backend_calls_total', { backend, method });
  await waitFor(
    `${count} more ${method} calls`,
    async () => ((await role.metric('banlieue_backend_calls_total', { backend, method })) >= start + count ? true : undefined),
    timeoutMs,
  );
}

/** DELETE with a propagation policy, as `kubectl delete --cascade=<foreground|orphan>` sends it. */
async function deleteWith(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>, propagationPolicy: 'Foreground' | 'Orphan'): Promise<void> {
  await t.api.request('DELETE', await t.api.pathOf(obj), { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy } });
}

/** The VM with BIOS UUID `uuid` in vcsim as `<name> <power state>`, or undefined when vCenter has none. */
async function vsphereVm(env: VsphereEnv, uuid: string): Promise<string | undefined> {
  const found = await env.client.search.findVmByBiosUuid(uuid);
  if (!found) return undefined;
  const summary = await env.client.vms.summary(found);
  return `${summary.name} ${summary.powerState}`;
}

/** What an operator does in vCenter: the VM with BIOS UUID `uuid` powered off and destroyed. */
async function destroyByHand(env: VsphereEnv, uuid: string): Promise<void> {
  const found = await env.client.search.findVmByBiosUuid(uuid);
  if (!found) return;
  await env.client.vms.powerOff(found);
  await env.client.vms.destroy(found);
}

/** A deletion unstuck by hand, the usual way: deleted, then its finalizers removed. */
async function forceDelete(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<void> {
  await t.delete(obj);
  await t.exists(obj, (o) => Boolean(o.metadata.deletionTimestamp));
  await t.patch(obj, { metadata: { finalizers: null } });
  await t.gone(obj, 60_000);
}

describe('what destroys a VM on vSphere (vcsim)', () => {
  let env: VsphereEnv | undefined;
  afterEach(async () => {
    await stopVsphereEnv(env);
    env = undefined;
  }, 180_000);

  const start = async (prefix: string): Promise<VsphereEnv> => {
    // Converged machines are read again every 2 s: a VM gone behind banlieue's back shows soon.
    env = await startVsphereEnv(prefix, { providerFlags: ['--resync-period', '2'] });
    return env;
  };
  const create = (e: VsphereEnv, name: string): Promise<Obj> => t.apply(vm(e.ns, name, e.world.vmClass.metadata.name, e.world.vmImage.metadata.name));
  /** A namespace of the test's own with one VirtualMachine `name` Ready at `ip`, and its VM's UUID. */
  const readyVm = async (prefix: string, name: string, ip: string): Promise<{ e: VsphereEnv; uuid: string }> => {
    const e = await start(prefix);
    await create(e, name);
    await readyWithAddress(e, name, ip);
    return { e, uuid: await providerIdOf(e.ns, name) };
  };

  it('a VM deleted by hand in vCenter is reported BackendMissing and never cloned again; deleting its VirtualMachine then destroys no other VM', async () => {
    const e = await start('destroy-missing');
    for (const [i, name] of ['lost', 'kept'].entries()) {
      await create(e, name);
      await readyWithAddress(e, name, `10.80.0.${i + 10}`);
    }
    const lost = await providerIdOf(e.ns, 'lost');
    const kept = await providerIdOf(e.ns, 'kept');
    const machine = await t.get(machineRef('vsphere', e.ns, 'lost'));
    // An operator removes the VM in vCenter.
    await destroyByHand(e, lost);

    const missing = await t.condition(machineRef('vsphere', e.ns, 'lost'), 'Ready', 'False', 'BackendMissing', 60_000);
    expect(missing.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')?.message).toContain('it is not re-created');
    const clones = await e.provider.metric('banlieue_backend_calls_total', { backend: 'vsphere', method: 'CloneVM_Task' });
    await afterCalls(e.provider, 'vsphere', 'FindByUuid', 6);
    expect(await e.provider.metric('banlieue_backend_calls_total', { backend: 'vsphere', method: 'CloneVM_Task' })).toBe(clones);
    expect(await vmsNamed(e.client, 'lost')).toEqual([]);
    // The same machine: the VirtualMachine did not replace it to get a VM back.
    expect((await t.get(machineRef('vsphere', e.ns, 'lost')))?.metadata.uid).toBe(machine?.metadata.uid);

    await t.delete(vm(e.ns, 'lost', '', ''));
    await t.gone(vm(e.ns, 'lost', '', ''), 60_000);
    expect(await vsphereVm(e, kept)).toBe('kept poweredOn');
    expect(await vmsNamed(e.client, 'lost')).toEqual([]);
  }, 300_000);

  it('deleting a VirtualMachine with propagationPolicy Foreground destroys its VM, through its machine', async () => {
    const { e, uuid } = await readyVm('destroy-foreground', 'fg', '10.81.0.10');
    await deleteWith(vm(e.ns, 'fg', '', ''), 'Foreground');
    await t.gone(vm(e.ns, 'fg', '', ''), 60_000);
    await t.gone(machineRef('vsphere', e.ns, 'fg'), 60_000);
    expect(await vsphereVm(e, uuid)).toBeUndefined();
  }, 300_000);

  it('deleting a VirtualMachine with propagationPolicy Orphan leaves its machine, and its VM running in vCenter with the same UUID', async () => {
    const { e, uuid } = await readyVm('destroy-orphan', 'orphaned', '10.82.0.10');
    const machine = await t.get(machineRef('vsphere', e.ns, 'orphaned'));
    try {
      // `kubectl delete --cascade=orphan`: delete the VirtualMachine, keep what it owns.
      await deleteWith(vm(e.ns, 'orphaned', '', ''), 'Orphan');
      await t.gone(vm(e.ns, 'orphaned', '', ''), 60_000);
      const left = await t
        .exists(machineRef('vsphere', e.ns, 'orphaned'), (m) => !(m.metadata.ownerReferences ?? []).some((r) => r.kind === 'VirtualMachine'), 60_000)
        .catch(async (err: unknown) => {
          const live = await t.get(machineRef('vsphere', e.ns, 'orphaned'));
          const state = live ? `deletionTimestamp ${live.metadata.deletionTimestamp ?? 'unset'}` : 'gone';
          throw new Error(`${String(err)}: the machine is ${state}; in vCenter: ${(await vsphereVm(e, uuid)) ?? 'no VM with its UUID'}`);
        });
      expect(left.metadata.uid).toBe(machine?.metadata.uid);
      expect(left.metadata.deletionTimestamp).toBeUndefined();
      await afterCalls(e.provider, 'vsphere', 'FindByUuid', 3);
      expect(await vsphereVm(e, uuid)).toBe('orphaned poweredOn');
    } finally {
      // The orphaned machine is nobody's now: deleting it is the explicit request that destroys its VM.
      await t.delete(machineRef('vsphere', e.ns, 'orphaned'));
      await t.gone(machineRef('vsphere', e.ns, 'orphaned'), 60_000);
    }
  }, 300_000);

  it('a VSphereMachine deleted while its provider is down, its finalizer then removed by hand, leaves its VM in vCenter', async () => {
    const e = await start('destroy-finalizer');
    const failureDomain = (await t.get(e.world.provider))?.status?.failureDomains?.[0]?.name as string;
    const template = String(e.world.vmImage.spec?.sources?.[0]?.ref);
    // Written directly, as Cluster API would: no VirtualMachine makes it again.
    const machine: Obj = {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name: 'let-go', namespace: e.ns },
      spec: { providerRef: { name: 'vcsim' }, failureDomain, template, numCpus: 1, memoryMiB: 512 },
    };
    await t.apply(machine);
    const uuid = await providerIdOf(e.ns, 'let-go');
    await waitFor('let-go in vcsim', async () => ((await playTools(e.client, uuid, '10.83.0.10')) ? true : undefined), 120_000);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 60_000);
    // A machine that goes on being converged: its passes show that the restarted provider runs.
    await create(e, 'witness');
    await readyWithAddress(e, 'witness', '10.83.0.11');

    // A deletion stuck (here: no provider to take it), unstuck by hand the usual way.
    await e.provider.stop();
    await forceDelete(machine);
    e.provider = await startRole(providerArgs(e.ns, e.providerFlags));
    await afterCalls(e.provider, 'vsphere', 'FindByUuid', 3);
    expect(await vsphereVm(e, uuid)).toBe('let-go poweredOn');
    // Nothing of banlieue's points at it any more: the operator removes it.
    await destroyByHand(e, uuid);
  }, 300_000);

  it('a machine deleted after its Provider was removed (its in-use finalizer forced off) lets go with a ProviderNotFound Warning and leaves its VM in vCenter', async () => {
    const { e, uuid } = await readyVm('destroy-no-provider', 'stranded', '10.86.0.10');
    // A cluster admin forces the Provider out while a VM is on it.
    await forceDelete(e.world.provider);

    await t.delete(vm(e.ns, 'stranded', '', ''));
    await t.gone(vm(e.ns, 'stranded', '', ''), 60_000);
    const warned = await eventsWhere(t.api, e.ns, 'stranded', (ev) => ev.type === 'Warning' && ev.reason === 'ProviderNotFound');
    expect(warned.find((ev) => ev.reason === 'ProviderNotFound')?.note).toContain(`the VM (UUID ${uuid}), if any, is left on the backend`);
    expect(await vsphereVm(e, uuid)).toBe('stranded poweredOn');
    // Nothing of banlieue's reaches it any more: the operator removes it.
    await destroyByHand(e, uuid);
  }, 300_000);

  it('deleting the VMClass and the VMImage of a running VM leaves it running in vCenter with the same UUID', async () => {
    const { e, uuid } = await readyVm('destroy-classless', 'classless', '10.84.0.10');
    const machine = await t.get(machineRef('vsphere', e.ns, 'classless'));
    await t.delete(e.world.vmClass);
    await t.delete(e.world.vmImage);
    await t.condition(vm(e.ns, 'classless', '', ''), 'Scheduled', 'False', 'ClassNotFound', 60_000);
    await afterCalls(e.provider, 'vsphere', 'FindByUuid', 3);
    expect(await vsphereVm(e, uuid)).toBe('classless poweredOn');
    const live = await t.get(machineRef('vsphere', e.ns, 'classless'));
    expect(live?.metadata.uid).toBe(machine?.metadata.uid);
    expect(live?.metadata.deletionTimestamp).toBeUndefined();
    // Back, so that the VM is deleted as any other.
    await t.apply(e.world.vmClass);
    await t.apply(e.world.vmImage);
  }, 300_000);

  it("deleting a namespace removes its machines and touches no VM of another namespace on the same vCenter; a VM it leaves still carries its machine's mark", async () => {
    const e = await start('destroy-ns-a');
    const other = await createNamespace('destroy-ns-b');
    const template = String(e.world.vmImage.spec?.sources?.[0]?.ref);
    const world = vsphereWorld(other.name, e.vcsim, 'other', template);
    for (const obj of [world.secret, world.provider]) await t.apply(obj);
    const roles: RoleProcess[] = [];
    try {
      roles.push(await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', other.name]));
      roles.push(await startRole(providerArgs(other.name, ['--resync-period', '2'])));
      await t.condition(world.provider, 'Ready', 'True', 'Reconciled', 60_000);
      const otherEnv: VsphereEnv = { ...e, ns: other.name, world: { ...world, vmClass: e.world.vmClass, vmImage: e.world.vmImage } };
      await create(e, 'in-a');
      await readyWithAddress(e, 'in-a', '10.85.0.10');
      await create(otherEnv, 'in-b');
      await readyWithAddress(otherEnv, 'in-b', '10.85.0.11');
      const inA = await providerIdOf(e.ns, 'in-a');
      const inB = await providerIdOf(other.name, 'in-b');

      await t.delete({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: e.ns } });
      await t.gone({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: e.ns } }, 180_000);

      expect(await vsphereVm(e, inB)).toBe('in-b poweredOn');
      await t.condition(machineRef('vsphere', other.name, 'in-b'), 'Ready', 'True', 'Reconciled', 60_000);
      // Destroyed through its Provider while that Provider's Secret lasted, or left behind (a Warning said so) once it had gone:
      // then it still names its machine, so nothing adopts it but a machine of that name in that namespace.
      const leftInA = await e.client.search.findVmByBiosUuid(inA);
      if (leftInA) expect((await e.client.vms.extraConfig(leftInA)).get(OWNER_MARK_KEY)).toBe(`VSphereMachine/${e.ns}/in-a`);
    } finally {
      // The other namespace's VM and Provider go while its roles run to take their finalizers off.
      for (const obj of [vm(other.name, 'in-b', '', ''), world.provider]) {
        await t.delete(obj);
        await t.gone(obj, 60_000).catch(() => undefined);
      }
      for (const role of roles) await role.stop();
      await other.remove();
      // The namespace is gone already: only the processes and vcsim are left to stop.
      const done = e;
      env = undefined;
      await done.controller.stop();
      await done.provider.stop();
      await done.client.close();
      await done.vcsim.stop();
      for (const obj of [done.world.vmClass, done.world.vmImage]) await t.delete(obj);
    }
  }, 420_000);
});

describe('what destroys a VM on libvirt (test driver)', () => {
  let env: LibvirtEnv | undefined;
  afterEach(async () => {
    await stopLibvirtEnv(env);
    env = undefined;
  }, 240_000);

  it('a domain undefined by hand is reported BackendMissing and never defined again; deleting its VirtualMachine leaves the other domain', async () => {
    const e = await startLibvirtEnv('destroy-undefined');
    env = e;
    // Converged machines read again every 2 s.
    await e.provider.stop();
    e.provider = await startRole(libvirtProviderArgs(e.ns, ['--resync-period', '2']));
    for (const name of ['gone', 'stays']) await t.apply(libvirtVm(e, name));
    for (const name of ['gone', 'stays']) await t.condition(vm(e.ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    const gone = await libvirtUuidOf(e.ns, 'gone');
    const stays = await libvirtUuidOf(e.ns, 'stays');
    const machine = await t.get(machineRef('libvirt', e.ns, 'gone'));
    // An operator's `virsh destroy; virsh undefine` (the volumes stay in the pool).
    const domain = await domainOf(e.anchor, gone);
    if (!domain) throw new Error('no domain gone');
    await e.anchor.domains.destroy(domain);
    await e.anchor.domains.undefine(domain);

    await t.condition(machineRef('libvirt', e.ns, 'gone'), 'Ready', 'False', 'BackendMissing', 60_000);
    const defines = await e.provider.metric('banlieue_backend_calls_total', { backend: 'libvirt', method: 'DOMAIN_DEFINE_XML_FLAGS' });
    await afterCalls(e.provider, 'libvirt', 'DOMAIN_LOOKUP_BY_UUID', 6);
    expect(await e.provider.metric('banlieue_backend_calls_total', { backend: 'libvirt', method: 'DOMAIN_DEFINE_XML_FLAGS' })).toBe(defines);
    expect(await domainOf(e.anchor, gone)).toBeUndefined();
    expect((await t.get(machineRef('libvirt', e.ns, 'gone')))?.metadata.uid).toBe(machine?.metadata.uid);

    const staysVolumes = await volumesOf(e.anchor, e.pool, stays);
    await t.delete(vm(e.ns, 'gone', '', ''));
    await t.gone(vm(e.ns, 'gone', '', ''), 60_000);
    // Its own volumes went with it (the VirtualMachine's deletion asked for its disks); the other domain is as it was.
    expect(await volumesOf(e.anchor, e.pool, gone)).toEqual([]);
    expect((await domainOf(e.anchor, stays))?.name).toBe(`${e.ns}-stays`);
    expect(await volumesOf(e.anchor, e.pool, stays)).toEqual(staysVolumes);
  }, 360_000);
});
