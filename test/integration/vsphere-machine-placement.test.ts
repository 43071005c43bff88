// Machines stay where their VMs were created, on a real backend peer (vcsim): a
// VSphereMachine records where its VM was cloned, admission refuses a spec
// naming another failure domain, and its Provider is not deleted before the VM
// is (the provider role's finalizer): the VM goes from vCenter through the
// Provider being deleted, not left behind. The generic cases run on the fake
// backend (machine-placement.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, machineRef, vm } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { readyWithAddress, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { uuidOf } from '../support/vsphere/world.js';

const t = new TestApi();

/** The apiserver's refusal of a write, or undefined when it accepted it. */
async function refusal(write: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await write();
    return undefined;
  } catch (err) {
    return String(err);
  }
}

describe('a VSphereMachine stays where its VM was cloned (vcsim)', () => {
  let env: VsphereEnv;

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-pin');
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  it('records the place, refuses a move, and keeps the Provider until the VM is deleted through it', async () => {
    await t.apply(vm(env.ns, 'pin-1', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await readyWithAddress(env, 'pin-1', '10.20.0.31', 120_000);
    const ref = machineRef('vsphere', env.ns, 'pin-1');
    const machine = await t.get(ref);
    const uuid = uuidOf(machine?.spec?.providerID as string);
    const providerName = env.world.provider.metadata.name;
    expect(machine?.status?.placement).toEqual({ provider: providerName, failureDomain: machine?.spec?.failureDomain, location: expect.any(Object) });

    const moved = await refusal(() => t.patch(ref, { spec: { failureDomain: 'somewhere-else' } }));
    expect(moved).toEqual(expect.stringContaining('cannot name another place once the VM was created'));

    await t.delete(env.world.provider);
    const held = await waitFor(
      'the Provider to wait for its machine',
      async () => {
        const p = await t.get(env.world.provider);
        return p?.metadata.deletionTimestamp ? p : undefined;
      },
      60_000,
    );
    expect(held.metadata.finalizers).toContain('banlieue.io/provider-in-use');
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeDefined();

    await t.delete(vm(env.ns, 'pin-1', '', ''));
    await t.gone(ref, 120_000);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
    await t.gone(env.world.provider, 60_000);
  });
});
