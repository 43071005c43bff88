// Clones do not hold up other machines: vcsim runs each clone task for 20 s,
// the provider reconciles 10 machines at once, and more clones than that are in
// flight; a power-off of a Ready VM still takes effect while they run, because
// a clone is started and remembered (status.taskRef), not awaited in a worker.
// Correctness only: how fast is `make bench` (vsphere-delayed-clone).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, vm, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import {
  isCloning,
  providerIdOf,
  readyWithAddress,
  startVsphereEnv,
  stopVsphereEnv,
  vsphereMachines as machines,
  type VsphereEnv,
} from '../support/vsphere/env.js';
import { IN_TEMPLATE_DATACENTER, vmsNamed } from '../support/vsphere/world.js';

const t = new TestApi();
const WORKERS = 10;
/** Each clone task runs 20 s in vcsim; LockHandoff:0 keeps the template readable meanwhile. */
const CLONE_DELAY = { CloneVm: 20_000, LockHandoff: 0 };

describe('vSphere clones in flight', () => {
  let env: VsphereEnv;

  beforeAll(async () => {
    env = await startVsphereEnv('vsphere-clones', { methodDelayMs: CLONE_DELAY, providerFlags: ['--machine-concurrency', String(WORKERS)] });
  }, 180_000);
  afterAll(() => stopVsphereEnv(env), 180_000);

  const inDc0 = { placement: IN_TEMPLATE_DATACENTER };
  const create = (name: string, extra: Record<string, unknown> = {}): Promise<Obj> =>
    t.apply(vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, { ...inDc0, ...extra }));

  it('powers off a Ready VM while more clones than workers are in flight, and every clone still completes', async () => {
    await create('steady');
    await readyWithAddress(env, 'steady', '10.50.0.1', 120_000);

    const names = Array.from({ length: WORKERS + 2 }, (_, i) => `clone-${String(i).padStart(2, '0')}`);
    await Promise.all(names.map((name) => create(name)));
    // More clones started and remembered than there are workers: none holds a worker.
    await waitFor(`more than ${WORKERS} clones in flight`, async () => (await machines(env.ns)).filter(isCloning).length > WORKERS, 60_000);

    await create('steady', { desiredPowerState: 'PoweredOff' });
    // The VirtualMachine and the machines read together: what was in flight when the power-off showed.
    const seen = await waitFor(
      'steady PoweredOff on its VirtualMachine',
      async () => {
        const [steady, all] = await Promise.all([t.get(vm(env.ns, 'steady', '', '')), machines(env.ns)]);
        return steady?.status?.observedPowerState === 'PoweredOff' ? all : undefined;
      },
      120_000,
    );
    const cloning = seen.filter(isCloning).map((m) => m.metadata.name);
    console.log(`steady showed PoweredOff with ${cloning.length} of ${names.length} clones in flight`);
    expect(cloning.length).toBeGreaterThan(0);
    expect(names).toEqual(expect.arrayContaining(cloning));
    const steadyUuid = await providerIdOf(env.ns, 'steady');
    const steadyVm = await env.client.search.findVmByBiosUuid(steadyUuid);
    if (!steadyVm) throw new Error('steady is not in vcsim');
    expect((await env.client.vms.summary(steadyVm)).powerState).toBe('poweredOff');

    // The clones the power-off went past complete, each into exactly one VM.
    await Promise.all(names.map((name, i) => readyWithAddress(env, name, `10.50.1.${i + 10}`, 180_000)));
    expect(await vmsNamed(env.client, 'clone-')).toEqual(names);
    expect((await machines(env.ns)).filter((m) => m.status?.taskRef !== undefined)).toEqual([]);
    expect(await vmsNamed(env.client, 'steady')).toEqual(['steady']);
  }, 420_000);

  it("says how far a clone is in the VirtualMachine's Ready message as vCenter's task progress rises, then goes Ready", async () => {
    await create('rising');
    const inFlight = await waitFor(
      'rising to remember its clone task',
      async () => (await machines(env.ns)).find((m) => m.metadata.name === 'rising' && isCloning(m)),
      60_000,
    );
    const task = { type: 'Task', value: String(inFlight.status?.taskRef) };
    // The message the VirtualMachine's Ready condition shows once it ends with `percent`% done.
    const messageAt = (percent: number): Promise<string> =>
      waitFor(
        `rising's Ready message at ${percent}%`,
        async () => {
          const conditions = (await t.get(vm(env.ns, 'rising', '', '')))?.status?.conditions as { type: string; message?: string }[] | undefined;
          const message = conditions?.find((c) => c.type === 'Ready')?.message;
          return message?.endsWith(`is running: ${percent}% done`) ? message : undefined;
        },
        60_000,
      );
    // vcsim leaves a task's info.progress to whoever calls Task.UpdateProgress; vCenter raises it as the copy goes.
    const seen: string[] = [];
    for (const percent of [20, 60]) {
      await env.client.session.invoke('UpdateProgress', task, { percentDone: percent });
      seen.push(await messageAt(percent));
    }
    console.log(`rising's Ready messages during one clone: ${JSON.stringify(seen)}`);
    // The task's name as vcsim gives it (CloneVm; vCenter's is CloneVM_Task), then its moref.
    expect(seen).toEqual([
      expect.stringMatching(new RegExp(`${task.value} is running: 20% done$`)),
      expect.stringMatching(new RegExp(`${task.value} is running: 60% done$`)),
    ]);
    await readyWithAddress(env, 'rising', '10.50.2.1', 120_000);
  }, 240_000);

  it('deletes a machine whose clone is still running only after the clone ends, leaving no VM behind', async () => {
    await create('doomed');
    const inFlight = await waitFor(
      'doomed to remember its clone task',
      async () => (await machines(env.ns)).find((m) => m.metadata.name === 'doomed' && isCloning(m)),
      60_000,
    );
    const taskRef = String(inFlight.status?.taskRef);
    const uuid = await providerIdOf(env.ns, 'doomed');
    await t.delete(vm(env.ns, 'doomed', '', ''));

    await waitFor(
      'doomed and its VSphereMachine to be gone',
      async () => !(await t.get(vm(env.ns, 'doomed', '', ''))) && !(await machines(env.ns)).some((m) => m.metadata.name === 'doomed'),
      180_000,
    );
    // The finalizer held until the clone ended, then the VM it made was destroyed: nothing left to appear later.
    expect(['success', 'error']).toContain((await env.client.tasks.info({ type: 'Task', value: taskRef })).state);
    expect(await env.client.search.findVmByBiosUuid(uuid)).toBeUndefined();
    expect(await vmsNamed(env.client, 'doomed')).toEqual([]);
  }, 300_000);
});
