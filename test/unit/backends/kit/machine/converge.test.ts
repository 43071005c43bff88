// The machine recipe (kit/machine/converge.ts, let-go.ts) over a table of steps that record
// their calls: which steps a pass runs, in which order, and that none that changes a VM runs
// for a VM whose marks are not the machine's, whatever the pass and its taskRef.
import { describe, expect, it } from 'vitest';
import { isBackendError } from '../../../../../controller/backends/backend-error.js';
import type { EnsureOptions, MachineRequest } from '../../../../../controller/backends/backend.js';
import { converge } from '../../../../../controller/backends/kit/machine/converge.js';
import { destroyMachineVm, releaseMachineVm } from '../../../../../controller/backends/kit/machine/let-go.js';
import type { Found, MachineSteps, Observed, TaskReading } from '../../../../../controller/backends/kit/machine/steps.js';
import { ownerMark, type VmMarks } from '../../../../../controller/backends/ownership.js';
import { silentLogger } from '../../../../../controller/runtime/log.js';

const log = silentLogger();
const owner = { kind: 'TestMachine', namespace: 'ns', name: 'web-1' };
const OURS: VmMarks = { owner: ownerMark(owner), releasedFrom: undefined };

interface World {
  /** What `find` finds: none, or a VM `vm-1` with these marks. */
  readonly marks?: VmMarks;
  readonly task?: TaskReading;
  readonly power?: Observed['power'];
}

/** The steps of a backend whose calls are recorded; the steps that change a VM are those after `find`. */
function recorded(world: World): { steps: MachineSteps<{ desiredPowerState?: 'PoweredOn' | 'PoweredOff' }, { id: string }, Observed>; calls: string[] } {
  const calls: string[] = [];
  const seen: Observed = { power: world.power ?? 'PoweredOff' };
  const done = (name: string) => () => {
    calls.push(name);
    return Promise.resolve({ state: 'Done' as const, seen });
  };
  const found: Found<{ id: string }> | undefined = world.marks && { ref: 'vm-1', vm: { id: 'vm-1' }, marks: world.marks };
  return {
    calls,
    steps: {
      readTask: () => Promise.resolve(world.task ?? { state: 'None' }),
      find: () => Promise.resolve(found),
      create: () => {
        calls.push('create');
        return Promise.resolve({ state: 'Started', taskRef: 'task-1', message: 'clone started' });
      },
      observe: () => {
        calls.push('observe');
        return Promise.resolve(seen);
      },
      writeGuestData: done('writeGuestData'),
      resize: done('resize'),
      power: done('power'),
      report: () => {
        calls.push('report');
        return Promise.resolve({ ref: 'vm-1', powerState: seen.power, addresses: [], statusFields: {} });
      },
      destroy: () => {
        calls.push('destroy');
        return Promise.resolve({ state: 'Gone', existed: true });
      },
      unmark: () => {
        calls.push('unmark');
        return Promise.resolve();
      },
    },
  };
}

const request = (taskRef?: string): MachineRequest<{ desiredPowerState?: 'PoweredOn' | 'PoweredOff' }> => ({
  name: 'web-1',
  namespace: 'ns',
  uuid: 'u-1',
  providerID: 'test://u-1',
  owner,
  spec: {},
  raw: {},
  userData: undefined,
  ...(taskRef ? { taskRef } : {}),
});

const FIRST_PASS: EnsureOptions = { mayCreate: true, firstBoot: true, specChanged: true, log };
const PROVISIONED: EnsureOptions = { mayCreate: false, firstBoot: false, specChanged: true, log };
const ANOTHER_VMS_TASK: TaskReading = { state: 'Ended', task: 'CloneVM_Task task-9', target: 'vm-9', creates: true, actions: ['Created'] };

async function thrown(work: () => Promise<unknown>): Promise<unknown> {
  return work().then(
    (result) => result,
    (error: unknown) => error,
  );
}

describe('the machine recipe on a VM whose marks are not the machine’s', () => {
  it.each<[string, VmMarks, EnsureOptions, TaskReading | undefined]>([
    ['no mark, first pass', { owner: undefined, releasedFrom: undefined }, FIRST_PASS, undefined],
    ["another machine's mark, first pass", { owner: 'TestMachine/ns/web-2', releasedFrom: undefined }, FIRST_PASS, undefined],
    ["another machine's mark, provisioned", { owner: 'TestMachine/ns/web-2', releasedFrom: undefined }, PROVISIONED, undefined],
    [
      "another machine's mark, taskRef naming that VM's clone",
      { owner: 'TestMachine/ns/web-2', releasedFrom: undefined },
      FIRST_PASS,
      { ...ANOTHER_VMS_TASK, target: 'vm-1' },
    ],
    ['no mark, provisioned, taskRef naming another task', { owner: undefined, releasedFrom: undefined }, PROVISIONED, ANOTHER_VMS_TASK],
    ['a mark this machine released', { owner: undefined, releasedFrom: ownerMark(owner) }, PROVISIONED, undefined],
  ])('ensure (%s) throws NotOwned and runs no step after find', async (_case, marks, options, task) => {
    const { steps, calls } = recorded({ marks, ...(task ? { task } : {}) });
    expect(isBackendError(await thrown(() => converge(steps, request(task ? 'task-9' : undefined), options)), 'NotOwned')).toBe(true);
    expect(calls).toEqual([]);
  });

  it('destroy and release throw NotOwned and neither destroys nor unmarks', async () => {
    const { steps, calls } = recorded({ marks: { owner: 'TestMachine/ns/web-2', releasedFrom: undefined } });
    expect(isBackendError(await thrown(() => destroyMachineVm(steps, request(), { log })), 'NotOwned')).toBe(true);
    expect(isBackendError(await thrown(() => releaseMachineVm(steps, request(), { log })), 'NotOwned')).toBe(true);
    expect(calls).toEqual([]);
  });
});

describe('the machine recipe on its own VM', () => {
  it('writes guest data, then powers, then reports, on a first boot', async () => {
    const { steps, calls } = recorded({ marks: OURS });
    expect(await converge(steps, request(), { ...FIRST_PASS, specChanged: false })).toMatchObject({ state: 'Present', observation: { actions: ['Adopted'] } });
    expect(calls).toEqual(['observe', 'writeGuestData', 'power', 'report']);
  });

  it('says Created, not Adopted, for the VM the task it picked up made, and does not resize it', async () => {
    const { steps, calls } = recorded({ marks: OURS, task: { ...ANOTHER_VMS_TASK, target: 'vm-1' } });
    expect(await converge(steps, request('task-1'), FIRST_PASS)).toMatchObject({ state: 'Present', observation: { actions: ['Created'] } });
    expect(calls).toEqual(['observe', 'writeGuestData', 'power', 'report']);
  });

  it('reads only the task while it runs', async () => {
    const { steps, calls } = recorded({ marks: OURS, task: { state: 'Running', task: 'CloneVM_Task task-1' } });
    expect(await converge(steps, request('task-1'), FIRST_PASS)).toEqual({
      state: 'InProgress',
      taskRef: 'task-1',
      message: 'CloneVM_Task task-1 is running',
      actions: [],
    });
    expect(calls).toEqual([]);
  });

  it.each([
    [0, 'CloneVM_Task task-1 is running: 0% done'],
    [37, 'CloneVM_Task task-1 is running: 30% done'],
    [39.9, 'CloneVM_Task task-1 is running: 30% done'],
    [40, 'CloneVM_Task task-1 is running: 40% done'],
    [100, 'CloneVM_Task task-1 is running: 100% done'],
  ])('says how far a running task is, in steps of 10 points so that a machine is written at most 10 times per task (%d%%)', async (progress, message) => {
    const { steps } = recorded({ marks: OURS, task: { state: 'Running', task: 'CloneVM_Task task-1', progress } });
    expect(await converge(steps, request('task-1'), FIRST_PASS)).toMatchObject({ state: 'InProgress', message });
  });

  it('starts the creation when no VM has the UUID and it may, and reports Absent when it may not', async () => {
    const { steps, calls } = recorded({});
    expect(await converge(steps, request(), FIRST_PASS)).toEqual({
      state: 'InProgress',
      taskRef: 'task-1',
      message: 'clone started',
      actions: ['CreateStarted'],
    });
    expect(await converge(steps, request(), PROVISIONED)).toEqual({ state: 'Absent' });
    expect(calls).toEqual(['create']);
  });

  it.each<[string, VmMarks, 'Present' | 'NotOwned']>([
    ['its own mark', OURS, 'Present'],
    ["another machine's mark", { owner: 'TestMachine/ns/web-2', releasedFrom: undefined }, 'NotOwned'],
  ])('takes a VM made within the pass as made, without finding it again, and checks its marks (%s)', async (_case, marks, outcome) => {
    const { steps, calls } = recorded({});
    const made = { ref: 'vm-1', vm: { id: 'vm-1' }, marks };
    const withMade: typeof steps = {
      ...steps,
      find: () => {
        calls.push('find');
        return Promise.resolve(undefined);
      },
      create: () => {
        calls.push('create');
        return Promise.resolve({ state: 'Ended', task: 'the definition of vm-1', creates: true, actions: ['Created'], made });
      },
    };
    const result = await thrown(() => converge(withMade, request(), FIRST_PASS));
    if (outcome === 'NotOwned') {
      expect(isBackendError(result, 'NotOwned')).toBe(true);
      expect(calls).toEqual(['find', 'create']);
    } else {
      expect(result).toMatchObject({ state: 'Present', observation: { actions: ['Created'] } });
      expect(calls).toEqual(['find', 'create', 'observe', 'writeGuestData', 'power', 'report']);
    }
  });

  it('fails a creating task after which no VM has the UUID (TaskFailed), creating nothing', async () => {
    const { steps, calls } = recorded({ task: ANOTHER_VMS_TASK });
    expect(isBackendError(await thrown(() => converge(steps, request('task-9'), FIRST_PASS)), 'TaskFailed')).toBe(true);
    expect(calls).toEqual([]);
  });

  it('waits out a running task before deleting or releasing, then destroys or unmarks', async () => {
    const running = recorded({ marks: OURS, task: { state: 'Running', task: 'CloneVM_Task task-1' } });
    expect(await destroyMachineVm(running.steps, request('task-1'), { log })).toEqual({
      state: 'InProgress',
      message: 'waiting for CloneVM_Task task-1 to end before deleting the VM',
    });
    expect(running.calls).toEqual([]);
    const { steps, calls } = recorded({ marks: OURS });
    expect(await destroyMachineVm(steps, request(), { log })).toEqual({ state: 'Gone', existed: true });
    expect(await releaseMachineVm(steps, request(), { log })).toEqual({ state: 'Released', ref: 'vm-1' });
    expect(calls).toEqual(['destroy', 'unmark']);
  });
});
