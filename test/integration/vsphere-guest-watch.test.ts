// A VM's guest reporting its address wakes its machine: the vSphere provider watches its VMs on
// vCenter (a PropertyCollector), so a VirtualMachine is Ready with its address once VMware Tools
// reports it, not at the next poll. The provider here polls every 10 minutes: only the watch can
// bring the address within the test's minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { machineRef, TestApi, vm, type Obj } from '../support/fixtures.js';
import { providerIdOf, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import { playTools } from '../support/vsphere/world.js';

const t = new TestApi();
const POLL_SECONDS = 600;

describe('vSphere: a guest address wakes its machine', () => {
  let env: VsphereEnv;

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-guest-watch', { providerFlags: ['--poll-period', String(POLL_SECONDS)] });
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  it('is Ready with the address Tools reports long before the poll period is over', async () => {
    await t.apply(vm(env.ns, 'watched-1', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    const uuid = await providerIdOf(env.ns, 'watched-1');
    // Powered on and waiting for its guest: the pass that saw it so next looks in 10 minutes.
    const waiting = await t.exists(
      machineRef('vsphere', env.ns, 'watched-1'),
      (m: Obj) => m.status?.observedPowerState === 'PoweredOn' && readyReason(m) === 'WaitingForAddress',
      60_000,
    );
    expect(waiting.status?.addresses ?? []).toEqual([]);

    expect(await playTools(env.client, uuid, '10.20.0.41')).toBe(true);
    const ready = await t.condition(vm(env.ns, 'watched-1', '', ''), 'Ready', 'True', 'Reconciled', 60_000);
    expect(ready.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.20.0.41' }]);
  });
});

function readyReason(m: Obj): string | undefined {
  const conditions = (m.status?.conditions ?? []) as { type: string; reason?: string }[];
  return conditions.find((c) => c.type === 'Ready')?.reason;
}
