// VirtualMachines on vSphere end to end: `banlieue controller` and `banlieue
// provider vsphere` as processes, vcsim as the vCenter, the real API server in
// between. The test plays VMware Tools (a guest IP) and reads what users see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { providerIdOf, readyWithAddress, startProvider, startVsphereEnv, stopVsphereEnv, type VsphereEnv as Env } from '../support/vsphere/env.js';
import { IN_TEMPLATE_DATACENTER, makeTemplate, playTools, uuidOf, vmsNamed } from '../support/vsphere/world.js';
import { eventsRegarding, eventsWhere, eventsWith, type EventSeen } from '../support/events.js';
import { kubectlRow } from '../support/kubectl-table.js';

const t = new TestApi();
const suffix = Math.random().toString(36).slice(2, 7);

const events = (ns: string, name: string): Promise<EventSeen[]> => eventsRegarding(t.api, ns, name);

describe('VirtualMachines on vSphere (vcsim)', () => {
  let env: Env;
  const userData = '#cloud-config\nhostname: ${VM_NAME}\n';

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-vm');
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  const create = (name: string, extra: Record<string, unknown> = {}): Promise<Obj> =>
    t.apply(vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, extra));

  it('provisions a VirtualMachine: a VM cloned with its UUID and shape, Ready with the address the guest reports', async () => {
    await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web-user-data', namespace: env.ns }, stringData: { 'user-data': userData } });
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } } });
    const ready = await readyWithAddress(env, 'web-1', '10.20.0.11');
    expect(ready.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.20.0.11' }]);
    expect(ready.status?.observedPowerState).toBe('PoweredOn');

    const machine = await t.get(machineRef('vsphere', env.ns, 'web-1'));
    const uuid = uuidOf(machine?.spec?.providerID as string);
    expect(machine?.spec?.providerID).toMatch(/^vsphere:\/\/[0-9a-f-]{36}$/);
    expect(machine?.status).toMatchObject({
      initialization: { provisioned: true },
      observedPowerState: 'PoweredOn',
      failureDomain: machine?.spec?.failureDomain,
      biosUuid: uuid,
      vmRef: expect.stringMatching(/^vm-/),
    });
    expect(machine?.metadata.finalizers).toContain('banlieue.io/vspheremachine');

    const found = await env.client.search.findVmByBiosUuid(uuid);
    if (!found) throw new Error('no VM with the providerID UUID in vcsim');
    const summary = await env.client.vms.summary(found);
    expect(summary).toMatchObject({ name: 'web-1', uuid, powerState: 'poweredOn', template: false });
    const hardware = await env.client.vms.hardware(found);
    expect(hardware).toMatchObject({ numCPUs: 2, memoryMB: 1024 });
    // The template's 10 GiB OS disk grown to the class's 20 GiB, the class's data disk added beside it.
    expect([...hardware.disks].sort((a, b) => a.key - b.key).map((d) => d.capacityKB)).toEqual([20 * 1024 * 1024, 5 * 1024 * 1024]);

    const extra = await env.client.vms.extraConfig(found);
    const decode = (key: string): string => Buffer.from(extra.get(key) ?? '', 'base64').toString('utf8');
    // A placeholder standing as a YAML value is rendered double-quoted (injection-proof, still a string in YAML 1.1).
    expect(decode('guestinfo.userdata')).toBe('#cloud-config\nhostname: "web-1"\n');
    expect(extra.get('guestinfo.userdata.encoding')).toBe('base64');
    const metadata = decode('guestinfo.metadata');
    expect(metadata).toContain('local-hostname: web-1');
    expect(metadata).toContain(`provider-id: vsphere://${uuid}`);
    expect(metadata).toMatch(/macaddress: "?[0-9a-f:]{17}/);

    const reasons = (await eventsWith(t.api, env.ns, 'web-1', ['Created', 'PoweredOn'])).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Created', 'PoweredOn']));
  });

  it('kubectl get shows where the VM runs, its address and why it is (not) Ready; the machine its ProviderID', async () => {
    const table = (...args: string[]): Promise<Record<string, string>> => kubectlRow(env.ns, ...args);
    const uuid = (await t.get(machineRef('vsphere', env.ns, 'web-1')))?.spec?.providerID as string;
    expect(await table('virtualmachines.banlieue.io', 'web-1')).toMatchObject({
      PROVIDER: 'vcsim',
      POWER: 'PoweredOn',
      IP: '10.20.0.11',
      READY: 'True',
      REASON: 'Reconciled',
    });
    expect(await table('virtualmachines.banlieue.io', 'web-1', '-o', 'wide')).toMatchObject({ CLASS: env.world.vmClass.metadata.name });
    expect(await table('vspheremachines.infrastructure.banlieue.io', 'web-1')).toMatchObject({ PROVIDERID: uuid, IP: '10.20.0.11', REASON: 'Reconciled' });
  });

  it('drives the VM to spec.desiredPowerState: off, then on again', async () => {
    const uuid = await providerIdOf(env.ns, 'web-1');
    const found = await env.client.search.findVmByBiosUuid(uuid);
    if (!found) throw new Error('web-1 is not in vcsim');
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, desiredPowerState: 'PoweredOff' });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);
    expect((await env.client.vms.summary(found)).powerState).toBe('poweredOff');

    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, desiredPowerState: 'PoweredOn' });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    expect((await env.client.vms.summary(found)).powerState).toBe('poweredOn');
    // Same VM, not a new one.
    expect(await vmsNamed(env.client, 'web-1')).toEqual(['web-1']);
  });

  it('applies a hardwareOverride change to the provisioned VM: CPUs, memory, a grown disk', async () => {
    const uuid = await providerIdOf(env.ns, 'web-1');
    const found = await env.client.search.findVmByBiosUuid(uuid);
    if (!found) throw new Error('web-1 is not in vcsim');
    await create('web-1', {
      userData: { secretRef: { name: 'web-user-data' } },
      hardwareOverride: { cpus: 4, memoryMiB: 2048, diskOverrides: [{ name: 'os', sizeGiB: 30 }] },
    });
    const hardware = await waitFor(
      'web-1 resized in vcsim',
      async () => {
        const hw = await env.client.vms.hardware(found);
        return hw.numCPUs === 4 ? hw : undefined;
      },
      60_000,
    );
    expect(hardware.memoryMB).toBe(2048);
    // vcsim lists an edited device last; the OS disk is the one with the lowest key.
    expect([...hardware.disks].sort((a, b) => a.key - b.key).map((d) => d.capacityKB)).toEqual([30 * 1024 * 1024, 5 * 1024 * 1024]);
    expect((await env.client.vms.summary(found)).powerState).toBe('poweredOn');
    await waitFor('a Reconfigured event', async () => ((await events(env.ns, 'web-1')).some((e) => e.reason === 'Reconfigured') ? true : undefined), 30_000);
  });

  it('deleting the VirtualMachine powers the VM off and removes it from vCenter', async () => {
    const uuid = await providerIdOf(env.ns, 'web-1');
    await t.delete(vm(env.ns, 'web-1', '', ''));
    await t.gone(machineRef('vsphere', env.ns, 'web-1'), 60_000);
    await t.gone(vm(env.ns, 'web-1', '', ''), 60_000);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
    expect(await vmsNamed(env.client, 'web-1')).toEqual([]);
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Deleted'])).find((e) => e.reason === 'Deleted')?.note).toBe(`Deleted the VM with UUID ${uuid}`);
  });

  it('says which template is unpublished, then missing, as a condition, and provisions once it exists', async () => {
    // Written directly, as Cluster API would: the provider's answer shows on it.
    const machine: Obj = {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name: 'standalone-1', namespace: env.ns },
      spec: {
        providerRef: { name: 'vcsim' },
        failureDomain: (await t.get(env.world.provider))?.status?.failureDomains?.[0]?.name,
        template: `late-${suffix}`,
        numCpus: 1,
        memoryMiB: 512,
      },
    };
    await t.apply(machine);
    // No VMImage names it: the Provider does not publish it, and vCenter is not asked.
    const unpublished = await t.condition(machine, 'Ready', 'False', 'TargetNotPublished', 60_000);
    expect(unpublished.status?.conditions?.find((c: { type: string }) => c.type === 'Ready').message).toContain(`spec.template "late-${suffix}" (an image)`);
    await t.patch(env.world.provider, { spec: { allowedTargets: [{ kind: 'image', names: [`late-${suffix}`] }] } });
    const failed = await t.condition(machine, 'Ready', 'False', 'TemplateNotFound', 60_000);
    const ready = failed.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
    expect(ready.message).toContain(`template "late-${suffix}"`);

    await makeTemplate(env.client, `late-${suffix}`);
    // A machine without a VirtualMachine (as Cluster API creates them): its own UID gives the UUID.
    const uuid = await providerIdOf(env.ns, 'standalone-1');
    await waitFor('standalone-1 in vcsim', async () => ((await playTools(env.client, uuid, '10.20.0.99')) ? true : undefined), 120_000);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 60_000);
    await t.delete(machine);
    await t.gone(machine, 60_000);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
  });

  it('provisions 20 VirtualMachines at once, all Ready; deleting them leaves no VM behind', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `fleet-${String(i).padStart(2, '0')}`);
    const inDc0 = { placement: IN_TEMPLATE_DATACENTER };
    await Promise.all(names.map((name) => create(name, inDc0)));
    await Promise.all(names.map((name, i) => readyWithAddress(env, name, `10.30.0.${i + 10}`)));
    expect(await vmsNamed(env.client, 'fleet-')).toEqual(names);

    await Promise.all(names.map((name) => t.delete(vm(env.ns, name, '', ''))));
    await Promise.all(names.map((name) => t.gone(vm(env.ns, name, '', ''), 120_000)));
    expect(await vmsNamed(env.client, 'fleet-')).toEqual([]);
    // Every pass of every machine, the discovery and the image rows shared one vCenter session.
    const calls = (labels: Record<string, string>): Promise<number> => env.provider.metric('banlieue_backend_calls_total', { backend: 'vsphere', ...labels });
    expect(await calls({ method: 'Login' })).toBe(1);
    expect(await calls({ method: 'CloneVM_Task', outcome: 'ok' })).toBeGreaterThanOrEqual(names.length);
    expect(await calls({ outcome: 'error' })).toBe(0);
  }, 300_000);
});

describe('vSphere provider crash safety', () => {
  let env: Env;

  // Each clone takes 4 s in vcsim; LockHandoff:0 keeps the template readable meanwhile.
  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-crash', { methodDelayMs: { CloneVm: 4_000, LockHandoff: 0 } });
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  it('a provider killed right after CloneVM_Task leaves exactly one VM, picked up after the restart', async () => {
    await t.apply(vm(env.ns, 'crash-1', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await waitFor('the clone to start', () => (env.provider.logs().includes('CloneVM_Task started') ? true : undefined), 60_000);
    await env.provider.kill();
    env.provider = await startProvider(env);

    await readyWithAddress(env, 'crash-1', '10.40.0.10');
    expect(await vmsNamed(env.client, 'crash-1')).toEqual(['crash-1']);
    // Its clone task kept in status.taskRef (Created), or, killed before that write, the second clone's DuplicateName (Adopted).
    expect((await eventsWhere(t.api, env.ns, 'crash-1', (e) => e.reason === 'Created' || e.reason === 'Adopted')).map((e) => e.reason)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(Created|Adopted)$/)]),
    );
  }, 180_000);
});
