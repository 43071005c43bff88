// A restart survives its provider killed mid-way: on vcsim, a guest that takes seconds to shut
// down (ShutdownGuest delayed), `banlieue provider vsphere` killed (SIGKILL) once it has asked the
// guest and recorded ShuttingDown, then started again. The restart is neither lost (the VM is
// powered on again, status.restart Restarted) nor repeated (one power-on, one new boot time).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { backendCalls } from '../support/backend-calls.js';
import { banlieueVm } from '../support/cli-process.js';
import { eventsWith } from '../support/events.js';
import { providerIdOf, readyWithAddress, startProvider, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';

const t = new TestApi();
/** How long vcsim takes to answer ShutdownGuest, and then its guest to go off. */
const SHUTDOWN_MS = 8_000;

describe('a restart across a provider killed mid-way (vcsim)', () => {
  let env: VsphereEnv;
  const web = (): Obj => vm(env.ns, 'web-1', '', '');

  beforeAll(async () => {
    // LockHandoff 0: the VM can be read while its guest shuts down.
    env = await startVsphereEnv('vsphere-restart-kill', { methodDelayMs: { ShutdownGuest: SHUTDOWN_MS, LockHandoff: 0 } });
    await t.apply(vm(env.ns, 'web-1', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await readyWithAddress(env, 'web-1', '10.20.0.41');
  }, 240_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  it('is carried out once: the VM powered on again by the next provider, one new boot, status.restart Restarted', async () => {
    const found = await env.client.search.findVmByBiosUuid(await providerIdOf(env.ns, 'web-1'));
    if (!found) throw new Error('web-1 is not in vcsim');
    const before = (await env.client.vms.summary(found)).bootTime;

    const run = await banlieueVm(env.ns, 'restart', 'web-1');
    expect(run.code).toBe(0);
    await t.exists(machineRef('vsphere', env.ns, 'web-1'), (m) => (m.status?.restart as { phase?: string } | undefined)?.phase === 'ShuttingDown', 60_000);
    await env.provider.kill();
    env.provider = await startProvider(env);

    const done = await t.exists(web(), (o) => (o.status?.restart as { phase?: string } | undefined)?.phase === 'Restarted', 120_000);
    expect(done.status?.restart).toMatchObject({ requestedAt: done.spec?.restartRequestedAt, phase: 'Restarted' });
    await t.condition(web(), 'Ready', 'True', 'Reconciled', 60_000);
    const after = await env.client.vms.summary(found);
    expect(after.powerState).toBe('poweredOn');
    expect(after.bootTime).toBeDefined();
    expect(after.bootTime).not.toBe(before);
    // The guest's shutdown only (the killed provider's request, then maybe the new one's, refused once the guest is off), one power-on.
    const made = await backendCalls(env.provider);
    expect(made.PowerOnVM_Task).toBe(1);
    expect(made.PowerOffVM_Task).toBeUndefined();
    const events = await eventsWith(t.api, env.ns, 'web-1', ['Restarted']);
    expect(events.filter((e) => e.reason === 'Restarted')).toHaveLength(1);
  }, 240_000);
});
