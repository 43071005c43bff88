// spec.deletionPolicy on a VirtualMachine, as a user sees it with the real
// controller and vSphere provider on vcsim: Retain leaves the VM running in
// vCenter without banlieue's mark, said in Events; Delete (the default)
// destroys it; a Retain set just before the delete still holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Reason } from '../../infra/api/conditions.js';
import { eventsWith } from '../support/events.js';
import { TestApi, machineRef, vm } from '../support/fixtures.js';
import { readyWithAddress, providerIdOf, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';

const t = new TestApi();

describe('VirtualMachine deletionPolicy', () => {
  let env: VsphereEnv;
  let cls: string;
  let image: string;

  beforeAll(async () => {
    env = await startVsphereEnv('deletion');
    cls = env.world.vmClass.metadata.name ?? '';
    image = env.world.vmImage.metadata.name ?? '';
  });

  afterAll(() => stopVsphereEnv(env));

  /** A Ready VM named `name`; its UUID in vcsim. */
  async function readyVm(name: string, spec: Record<string, unknown> = {}): Promise<string> {
    await t.apply(vm(env.ns, name, cls, image, spec));
    await readyWithAddress(env, name, '10.0.0.7');
    return providerIdOf(env.ns, name);
  }

  async function deleteAndWait(name: string): Promise<void> {
    await t.delete(vm(env.ns, name, '', ''));
    await t.gone(vm(env.ns, name, '', ''), 60_000);
    await t.gone(machineRef('vsphere', env.ns, name), 60_000);
  }

  /** The VM in vcsim: powered on, and which of banlieue's marks it carries. */
  async function inVcsim(uuid: string): Promise<{ powerState: string; owner: string | undefined } | undefined> {
    const ref = await env.client.search.findVmByBiosUuid(uuid);
    if (!ref) return undefined;
    const summary = await env.client.vms.summary(ref);
    const owner = (await env.client.vms.extraConfig(ref)).get('banlieue.owner');
    return { powerState: summary.powerState, owner: owner === '' ? undefined : owner };
  }

  it('leaves the VM running in vCenter, unmarked, and says so, when a Retain VirtualMachine is deleted', async () => {
    const uuid = await readyVm('kept', { deletionPolicy: 'Retain' });
    expect((await t.get(machineRef('vsphere', env.ns, 'kept')))?.spec?.deletionPolicy).toBe('Retain');
    await deleteAndWait('kept');
    expect(await inVcsim(uuid)).toEqual({ powerState: 'poweredOn', owner: undefined });
    const onMachine = await eventsWith(t.api, env.ns, 'kept', [Reason.VMRetained]);
    const notes = onMachine.filter((e) => e.reason === Reason.VMRetained).map((e) => `${e.regarding?.kind ?? ''}: ${e.note}`);
    expect(notes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^VirtualMachine: deletionPolicy Retain/),
        expect.stringMatching(new RegExp(`^VSphereMachine: .*${uuid}`)),
      ]),
    );
  });

  it('destroys the VM when a VirtualMachine with the default deletionPolicy is deleted', async () => {
    const uuid = await readyVm('dropped');
    expect((await t.get(vm(env.ns, 'dropped', '', '')))?.spec?.deletionPolicy).toBe('Delete');
    await deleteAndWait('dropped');
    expect(await inVcsim(uuid)).toBeUndefined();
  });

  it('keeps the VM when Retain is set on the VirtualMachine just before it is deleted', async () => {
    const uuid = await readyVm('late');
    await t.patch(vm(env.ns, 'late', '', ''), { spec: { deletionPolicy: 'Retain' } });
    await t.delete(vm(env.ns, 'late', '', ''));
    await t.gone(vm(env.ns, 'late', '', ''), 60_000);
    expect(await inVcsim(uuid)).toEqual({ powerState: 'poweredOn', owner: undefined });
    const retained = (await eventsWith(t.api, env.ns, 'late', [Reason.VMRetained])).filter(
      (e) => e.reason === Reason.VMRetained && e.regarding?.kind === 'VSphereMachine',
    );
    expect(retained.map((e) => e.note)).toEqual([expect.stringContaining(uuid)]);
  });
});
