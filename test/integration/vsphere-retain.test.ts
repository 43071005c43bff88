// spec.deletionPolicy on a VSphereMachine, end to end: `banlieue provider
// vsphere` as a process, vcsim as the vCenter, the real API server in between.
// A machine with Retain goes away and leaves its VM in vCenter as it was,
// running, without banlieue's mark, named in a VMRetained Event; one with the
// default (Delete) still destroys its VM.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { providerIdOf, startVsphereEnv, stopVsphereEnv, type VsphereEnv as Env } from '../support/vsphere/env.js';
import { playTools } from '../support/vsphere/world.js';
import { eventsWith } from '../support/events.js';

const t = new TestApi();

describe('deleting a VSphereMachine (vcsim)', () => {
  let env: Env;
  /** The UUID of the VM the first test retains. */
  let retainedUuid = '';

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-retain');
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  /** A VSphereMachine written directly, as Cluster API would. */
  async function machineObject(name: string, spec: Record<string, unknown> = {}): Promise<Obj> {
    const provider = await t.get(env.world.provider);
    const template = (env.world.vmImage.spec as { sources: { ref: string }[] }).sources[0]?.ref;
    return {
      apiVersion: INFRA,
      kind: 'VSphereMachine',
      metadata: { name, namespace: env.ns },
      spec: { providerRef: { name: 'vcsim' }, failureDomain: provider?.status?.failureDomains?.[0]?.name, template, numCpus: 1, memoryMiB: 512, ...spec },
    };
  }

  /** The machine applied and Ready with the address the test plays for its guest; its UUID. */
  async function readyMachine(name: string, ip: string, spec: Record<string, unknown> = {}): Promise<{ machine: Obj; uuid: string }> {
    const machine = await machineObject(name, spec);
    await t.apply(machine);
    const uuid = await providerIdOf(env.ns, name);
    await waitFor(`${name} in vcsim`, async () => ((await playTools(env.client, uuid, ip)) ? true : undefined), 120_000);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 60_000);
    return { machine, uuid };
  }

  it('with deletionPolicy Retain goes away and leaves its VM in vCenter, powered on, without banlieue.owner, named in a VMRetained Event', async () => {
    const { machine, uuid } = await readyMachine('kept-1', '10.20.0.51', { deletionPolicy: 'Retain' });
    retainedUuid = uuid;
    const vmRef = (await t.get(machine))?.status?.vmRef as string;
    expect(vmRef).toMatch(/^vm-/);

    await t.delete(machine);
    await t.gone(machine, 60_000);

    const vm = await env.client.search.findVmByBiosUuid(uuid);
    expect(vm?.value).toBe(vmRef);
    if (!vm) throw new Error(`the VM with UUID ${uuid} is gone from vcsim`);
    expect(await env.client.vms.summary(vm)).toMatchObject({ name: 'kept-1', uuid, powerState: 'poweredOn' });
    const extraConfig = await env.client.vms.extraConfig(vm);
    expect(extraConfig.has('banlieue.owner')).toBe(false);
    expect(extraConfig.get('banlieue.released-from')).toBe(`VSphereMachine/${env.ns}/kept-1`);
    const retained = (await eventsWith(t.api, env.ns, 'kept-1', ['VMRetained'])).find((e) => e.reason === 'VMRetained');
    expect(retained).toMatchObject({ type: 'Normal', regarding: { kind: 'VSphereMachine', name: 'kept-1' } });
    expect(retained?.note).toBe(
      `Retained VM ${vmRef} (UUID ${uuid}) on Provider vcsim as it is (deletionPolicy Retain): its banlieue ownership mark is removed and banlieue no longer manages it`,
    );
  });

  it('leaves that VM alone afterwards: a machine of the same name given its UUID is refused (VMNotOwned), and deleting it leaves the VM running', async () => {
    const uuid = retainedUuid;
    const intruder = await machineObject('kept-1', { providerID: `vsphere://${uuid}` });
    await t.apply(intruder);
    await t.condition(intruder, 'Ready', 'False', 'VMNotOwned', 60_000);
    await t.delete(intruder);
    await t.gone(intruder, 60_000);
    const vm = await env.client.search.findVmByBiosUuid(uuid);
    if (!vm) throw new Error(`the VM with UUID ${uuid} is gone from vcsim`);
    expect((await env.client.vms.summary(vm)).powerState).toBe('poweredOn');
  });

  it('with the default deletionPolicy (Delete) still destroys its VM', async () => {
    const { machine, uuid } = await readyMachine('gone-1', '10.20.0.52');
    await t.delete(machine);
    await t.gone(machine, 60_000);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
    expect((await eventsWith(t.api, env.ns, 'gone-1', ['Deleted'])).find((e) => e.reason === 'Deleted')?.note).toBe(`Deleted the VM with UUID ${uuid}`);
  });
});
