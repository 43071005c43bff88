// A vSphere Provider clones only VM templates unless its admin opts in. A tenant naming a VM
// that is not a template (here a powered-on "payroll database") as its machine's template
// would otherwise get a copy of that VM's disks booted with user-data of their own: root on
// the victim's data. Tried on the default install as the tenant's ServiceAccount, vcsim as
// the vCenter: named as a VMImage publishes it, the machine is refused (Ready=False
// TemplateNotFound, naming spec.template); by a path nothing publishes, before vCenter
// (TargetNotPublished); no CloneVM_Task is asked for and vCenter has no copy; a VMImage naming the VM gets no ready
// row, so no VirtualMachine of it is placed. Once the Provider's admin sets
// spec.vsphere.allowCloneFromVirtualMachines, both clone it, as CAPV does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendCalls } from '../support/backend-calls.js';
import { CORE, INFRA, TestApi, machineRef, vm, type Obj, readyOf } from '../support/fixtures.js';
import { createTenant, type Tenant } from '../support/tenant.js';
import { readyWithAddress, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { startInstalledVsphereEnv } from '../support/vsphere/installed-env.js';
import { playTools, uuidOf, vmsNamed } from '../support/vsphere/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const suffix = Math.random().toString(36).slice(2, 7);
const VICTIM = `payroll-db-${suffix}`;

/** CloneVM_Tasks the provider asked vCenter for so far (the only way a machine gets a VM). */
const clonesAsked = async (env: VsphereEnv): Promise<number> => (await backendCalls(env.provider)).CloneVM_Task ?? 0;

describe('vSphere clones templates only, unless the Provider opts in (default install, vcsim, the tenant as its ServiceAccount)', () => {
  let env: VsphereEnv;
  let tenant: Tenant;
  let ns: string;
  let failureDomain: string;
  const payrollImage: Obj = {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name: `payroll-image-${suffix}` },
    spec: {
      osFamily: 'linux',
      osDistribution: 'ubuntu',
      osVersion: '24.04',
      architecture: 'amd64',
      sources: [{ providerClass: 'vsphere', kind: 'Template', ref: VICTIM }],
    },
  };

  const vsphereMachine = (name: string, template: string): Obj => ({
    apiVersion: INFRA,
    kind: 'VSphereMachine',
    metadata: { name, namespace: ns },
    spec: { providerRef: { name: 'vcsim' }, failureDomain, template, numCpus: 1, memoryMiB: 512 },
  });

  /** The image's row of the Provider, once the provider wrote one. */
  const rowOf = async (): Promise<Record<string, unknown>> =>
    waitFor(
      'the payroll image row of Provider vcsim',
      async () => {
        const rows = (await t.get(payrollImage))?.status?.perProvider as { providerNamespace: string; providerName: string }[] | undefined;
        return rows?.find((r) => r.providerNamespace === ns && r.providerName === 'vcsim');
      },
      60_000,
    );

  beforeAll(async () => {
    env = await startInstalledVsphereEnv('templates-only');
    ns = env.ns;
    tenant = await createTenant(ns);
    const fds = (await t.get(env.world.provider))?.status?.failureDomains as { name: string; attributes: { raw: Record<string, string> } }[];
    failureDomain = fds.find((fd) => fd.attributes.raw.datacenter === 'DC0' && fd.attributes.raw.cluster === 'DC0_C0')?.name ?? '';
    // A production VM, running, that is no template: a copy of it made from vcsim's first VM.
    const [dc] = await env.client.inventory.datacenters();
    const [cluster] = dc ? await env.client.inventory.clusters(dc.hostFolder) : [];
    const source = await env.client.search.findByInventoryPath('DC0/vm/DC0_C0_RP0_VM0');
    if (!dc || !cluster || !source) throw new Error('vcsim inventory is not as expected');
    await env.client.vms.clone(source, dc.vmFolder, VICTIM, { location: { pool: cluster.resourcePool }, powerOn: true });
    await t.apply(payrollImage);
  }, 240_000);
  afterAll(async () => {
    // The machines made directly first, while the provider still runs to take their finalizers off.
    const machines = ['by-name', 'by-path', 'opted-in'].map((name) => machineRef('vsphere', ns, name));
    await Promise.all(machines.map((m) => t.delete(m)));
    await Promise.all(machines.map((m) => t.gone(m, 120_000)));
    await t.delete(payrollImage);
    await stopVsphereEnv(env);
  }, 300_000);

  it('refuses a tenant VSphereMachine naming the VM: by the name a VMImage publishes, Ready=False TemplateNotFound; by a path nothing publishes, TargetNotPublished; vCenter clones nothing', async () => {
    const attempts = [
      { machine: vsphereMachine('by-name', VICTIM), reason: 'TemplateNotFound', says: 'spec.vsphere.allowCloneFromVirtualMachines' },
      { machine: vsphereMachine('by-path', `DC0/vm/${VICTIM}`), reason: 'TargetNotPublished', says: 'spec.allowedTargets' },
    ];
    for (const { machine } of attempts) expect(await tenant.serviceAccount.create(machine)).toBeUndefined();
    for (const { machine, reason, says } of attempts) {
      const name = machine.metadata.name;
      // Whichever comes first: the refusal, or a VM cloned for the machine.
      const live = await waitFor(
        `${name} refused or cloned`,
        async () => {
          const seen = await t.get(machine);
          if (readyOf(seen)?.reason === reason) return seen;
          return (await vmsNamed(env.client, name)).length > 0 ? seen : undefined;
        },
        120_000,
      );
      expect(await vmsNamed(env.client, name)).toEqual([]);
      expect(readyOf(live)).toMatchObject({ status: 'False', reason });
      expect(readyOf(live)?.message).toContain('spec.template');
      expect(readyOf(live)?.message).toContain(says);
    }
    expect(await clonesAsked(env)).toBe(0);
  }, 300_000);

  it('gives a VMImage naming the VM no ready row, so a tenant VirtualMachine of it is not placed and nothing is cloned', async () => {
    expect(await rowOf()).toMatchObject({ ready: false, reason: 'ImageSourceNotFound' });
    const tenantVm = vm(ns, 'from-image', env.world.vmClass.metadata.name, payrollImage.metadata.name);
    expect(await tenant.serviceAccount.create(tenantVm)).toBeUndefined();
    await t.condition(tenantVm, 'Scheduled', 'False', 'ImageNotReady', 60_000);
    expect(await t.get(machineRef('vsphere', ns, 'from-image'))).toBeUndefined();
    expect(await clonesAsked(env)).toBe(0);
  }, 180_000);

  it("refuses the tenant's own opt-in on the admin's Provider: only who may get its credentials Secret sets spec.vsphere", async () => {
    const optIn = { spec: { vsphere: { allowCloneFromVirtualMachines: true } } };
    for (const actor of tenant.actors) expect(await actor.patch(env.world.provider, optIn)).toContain('only who may get its credentials Secret');
    expect((await t.get(env.world.provider))?.spec?.vsphere).toBeUndefined();
  });

  it("clones the VM once the Provider's admin sets spec.vsphere.allowCloneFromVirtualMachines: a new machine, the image row, the waiting VirtualMachine", async () => {
    await t.patch(env.world.provider, { spec: { vsphere: { allowCloneFromVirtualMachines: true } } });
    expect((await t.get(env.world.provider))?.spec?.vsphere).toEqual({ allowCloneFromVirtualMachines: true });

    const machine = vsphereMachine('opted-in', VICTIM);
    expect(await tenant.serviceAccount.create(machine)).toBeUndefined();
    const uuid = uuidOf((await t.exists(machine, (o) => typeof o.spec?.providerID === 'string', 60_000)).spec?.providerID as string);
    await waitFor('opted-in cloned in vcsim', async () => ((await playTools(env.client, uuid, '10.50.0.10')) ? true : undefined), 120_000);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 120_000);
    expect(await vmsNamed(env.client, 'opted-in')).toEqual(['opted-in']);

    await waitFor('the image row ready', async () => ((await rowOf()).ready === true ? true : undefined), 120_000);
    expect(await rowOf()).toMatchObject({ ready: true, resolvedRef: `DC0/vm/${VICTIM}` });
    await readyWithAddress(env, 'from-image', '10.50.0.11', 180_000);
    expect(await vmsNamed(env.client, 'from-image')).toEqual(['from-image']);
    expect(await clonesAsked(env)).toBeGreaterThanOrEqual(2);
  }, 420_000);
});
