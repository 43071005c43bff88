// `banlieue vm stop|start|restart` against a VM on vSphere: the CLI as a user runs it, the
// controller and `banlieue provider vsphere` as processes, vcsim as the vCenter. The test reads
// what the user sees (the VirtualMachine's status, Events) and, as an operator would in vCenter,
// the VM's power state and boot time; the provider's own metrics say which vSphere calls it made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { backendCalls, callsSince } from '../support/backend-calls.js';
import { banlieueVm } from '../support/cli-process.js';
import { eventsWith } from '../support/events.js';
import { waitFor } from '../support/wait.js';
import { providerIdOf, readyWithAddress, startProvider, startVsphereEnv, stopVsphereEnv, type VsphereEnv } from '../support/vsphere/env.js';
import type { ManagedObjectReference } from '../../controller/backends/vsphere/client/vim-types.js';

const t = new TestApi();

describe('banlieue vm start|stop|restart on vSphere (vcsim)', () => {
  let env: VsphereEnv;
  let ref: ManagedObjectReference;
  const web = (): Obj => vm(env.ns, 'web-1', '', '');
  const verb = (...args: string[]): ReturnType<typeof banlieueVm> => banlieueVm(env.ns, ...args);
  const summary = (): ReturnType<VsphereEnv['client']['vms']['summary']> => env.client.vms.summary(ref);

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-verbs');
    await t.apply(vm(env.ns, 'web-1', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await readyWithAddress(env, 'web-1', '10.20.0.31');
    const found = await env.client.search.findVmByBiosUuid(await providerIdOf(env.ns, 'web-1'));
    if (!found) throw new Error('web-1 is not in vcsim');
    ref = found;
  }, 240_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  it('restart shuts the guest down through VMware Tools and powers the VM on again, once: its boot time changes and its status says Restarted', async () => {
    const before = await summary();
    expect(before.powerState).toBe('poweredOn');
    expect(before.bootTime).toBeDefined();
    const calls = await backendCalls(env.provider);

    const run = await verb('restart', 'web-1');
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const requestedAt = (await t.get(web()))?.spec?.restartRequestedAt as string;
    expect(run.out).toBe(
      `VirtualMachine ${env.ns}/web-1: restart requested (spec.restartRequestedAt ${requestedAt}): its guest is shut down, then the VM is powered on again; status.restart says how far it went\n`,
    );

    const done = await t.exists(web(), (o) => (o.status?.restart as { phase?: string } | undefined)?.phase === 'Restarted', 120_000);
    expect(done.status?.restart).toEqual({ requestedAt, phase: 'Restarted', lastTransitionTime: expect.any(String) });
    const after = await summary();
    expect(after.powerState).toBe('poweredOn');
    expect(after.bootTime).toBeDefined();
    expect(after.bootTime).not.toBe(before.bootTime);
    // The guest's own shutdown, never a hard power-off; one power-on.
    const made = callsSince(calls, await backendCalls(env.provider));
    expect(made).toMatchObject({ ShutdownGuest: 1, PowerOnVM_Task: 1 });
    expect(made.PowerOffVM_Task).toBeUndefined();
    const reasons = (await eventsWith(t.api, env.ns, 'web-1', ['Restarting', 'Restarted'])).map((e) => e.reason);
    expect(reasons.filter((r) => r === 'Restarted')).toHaveLength(1);
    await t.condition(web(), 'Ready', 'True', 'Reconciled', 60_000);
  }, 240_000);

  it('does not restart again when the provider restarts or looks at the machine again', async () => {
    const { bootTime } = await summary();
    const record = (await t.get(web()))?.status?.restart;
    await env.provider.stop();
    env.provider = await startProvider(env);
    const machine = machineRef('vsphere', env.ns, 'web-1');
    // Two passes over the machine in the new process (an update of the machine makes the second).
    await waitFor('a pass of the new provider over web-1', async () => ((await backendCalls(env.provider)).FindByUuid ?? 0) >= 1 || undefined, 60_000);
    await t.patch(machine, { metadata: { annotations: { 'test.banlieue.io/look-again': 'once' } } });
    await waitFor('a second pass over web-1', async () => ((await backendCalls(env.provider)).FindByUuid ?? 0) >= 2 || undefined, 60_000);
    const made = await backendCalls(env.provider);
    expect(made.ShutdownGuest).toBeUndefined();
    expect(made.PowerOnVM_Task).toBeUndefined();
    expect((await summary()).bootTime).toBe(bootTime);
    expect((await t.get(web()))?.status?.restart).toEqual(record);
  }, 180_000);

  it('stop shuts the guest down (no hard power-off) and start powers it on; each says what it changed', async () => {
    const calls = await backendCalls(env.provider);
    const stop = await verb('stop', 'web-1');
    expect(stop.code).toBe(0);
    expect(stop.out).toBe(
      `VirtualMachine ${env.ns}/web-1: spec.desiredPowerState PoweredOn → PoweredOff: its guest is asked to shut down, and the VM is powered off once it has (or after the grace period)\n`,
    );
    await t.exists(web(), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);
    expect((await summary()).powerState).toBe('poweredOff');
    const made = callsSince(calls, await backendCalls(env.provider));
    expect(made.ShutdownGuest).toBe(1);
    expect(made.PowerOffVM_Task).toBeUndefined();

    // Off is off: stopping again changes nothing, and a restart is refused, saying how to start it.
    expect((await verb('stop', 'web-1')).out).toContain('is already to be PoweredOff (spec.desiredPowerState); it is PoweredOff: nothing changed');
    const restart = await verb('restart', 'web-1');
    expect(restart.code).toBe(1);
    expect(restart.err).toBe(
      `error: VirtualMachine ${env.ns}/web-1 is to be PoweredOff (spec.desiredPowerState), so there is nothing to restart: start it with \`banlieue vm start web-1\`\n`,
    );

    const start = await verb('start', 'web-1');
    expect(start.out).toBe(`VirtualMachine ${env.ns}/web-1: spec.desiredPowerState PoweredOff → PoweredOn: the provider powers it on\n`);
    await t.exists(web(), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    expect((await summary()).powerState).toBe('poweredOn');
  }, 180_000);

  it('names a VirtualMachine that does not exist', async () => {
    const run = await verb('restart', 'nope');
    expect(run.code).toBe(1);
    expect(run.err).toBe(`error: VirtualMachine "nope" not found in namespace "${env.ns}"\n`);
  });
});
