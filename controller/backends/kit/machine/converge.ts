// One machine pass, the same on every backend (`MachineBackend.ensure`):
//   1. the task an earlier pass started (status.taskRef): while it runs, reading it is the pass;
//   2. the VM, found by the machine's UUID (a task's VM is only where to look first);
//   3. none: its creation started when allowed (a long task is remembered, never awaited), or Absent;
//   4. the VM's marks: not this machine's, and nothing is touched (NotOwned), on every pass and
//      after every task, whatever the status says;
//   5. the steps planned by decide.ts (guest data, resize, power), each done, or a task started;
//   6. what the VM is now.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { EnsureOptions, EnsureResult, MachineAction, MachineRequest } from '../../backend.js';
import { assertOwnedBy } from '../../ownership.js';
import { decideIdentityActions, missingAfter, planSteps, runningTask, type StepName } from './decide.js';
import type { ConvergeStep, EndedTask, Found, IdentitySteps, MachineSteps, Observed, Owned, Pass, TaskReading } from './steps.js';

type InProgress = Extract<EnsureResult, { state: 'InProgress' }>;

/** A spec whose power can be asked for: every machine kind's. */
export interface PoweredSpec {
  readonly desiredPowerState?: PowerState;
}

/** The VM found and owned, with what its identity says as Events. */
interface Identified<Vm> {
  readonly state: 'Identified';
  readonly vm: Owned<Vm>;
  readonly actions: readonly MachineAction[];
}

/** Converges the machine's VM one pass further (the module's recipe). */
export async function converge<Spec extends PoweredSpec, Vm, Seen extends Observed>(
  steps: MachineSteps<Spec, Vm, Seen>,
  request: MachineRequest<Spec>,
  options: EnsureOptions,
): Promise<EnsureResult> {
  const task = await readTask(steps, request);
  if (task.state === 'Running') return { state: 'InProgress', taskRef: task.taskRef, message: runningTask(task.task, task.progress), actions: [] };
  const identified = await identify(steps, request, options, task.state === 'Ended' ? task : undefined);
  if (identified.state !== 'Identified') return identified;
  return convergeOwned(steps, identified, { request, options, desired: request.spec.desiredPowerState ?? 'PoweredOn' });
}

/** The remembered task as the backend reports it (a running one with its reference); `None` without one, or when the backend starts none. */
export async function readTask<Spec, Vm>(
  steps: Pick<IdentitySteps<Spec, Vm>, 'readTask'>,
  request: MachineRequest<Spec>,
): Promise<Exclude<TaskReading, { state: 'Running' }> | (Extract<TaskReading, { state: 'Running' }> & { readonly taskRef: string })> {
  const { taskRef } = request;
  if (taskRef === undefined || !steps.readTask) return { state: 'None' };
  const reading = await steps.readTask(request, taskRef);
  return reading.state === 'Running' ? { ...reading, taskRef } : reading;
}

/**
 * Throws NotOwned unless `found` carries the machine's mark; the VM as the only thing steps
 * that change it take. The one ownership check of every pass, every task result and every deletion.
 */
export function own<Vm>(request: MachineRequest<unknown>, found: Found<Vm>): Owned<Vm> {
  assertOwnedBy(request.owner, request.uuid, found.marks.owner);
  if (found.vm === undefined)
    throw new BackendError(BackendErrorKind.NotOwned, `the VM with UUID ${request.uuid} (${found.ref}) cannot be read as a banlieue VM`);
  return found.vm as Owned<Vm>;
}

async function identify<Spec, Vm>(
  steps: IdentitySteps<Spec, Vm>,
  request: MachineRequest<Spec>,
  options: EnsureOptions,
  taskEnded: EndedTask | undefined,
): Promise<Identified<Vm> | { readonly state: 'Absent' } | InProgress> {
  const look = (task: EndedTask | undefined): Parameters<typeof steps.find>[1] => ({
    ...(task?.target ? { hint: task.target } : {}),
    provisioned: !options.firstBoot,
  });
  let ended = taskEnded;
  let found = await steps.find(request, look(ended));
  if (!found) {
    if (ended?.creates) throw missingAfter(ended, request.uuid);
    if (!options.mayCreate) return { state: 'Absent' };
    const creation = await steps.create(request, options);
    if (creation.state === 'Started') return { state: 'InProgress', taskRef: creation.taskRef, message: creation.message, actions: ['CreateStarted'] };
    ended = creation;
    found = 'made' in creation ? creation.made : await steps.find(request, look(ended));
    if (!found) throw missingAfter(ended, request.uuid);
  }
  const vm = own(request, found);
  return { state: 'Identified', vm, actions: decideIdentityActions(ended, found.ref, options.firstBoot) };
}

async function convergeOwned<Spec, Vm, Seen extends Observed>(
  steps: MachineSteps<Spec, Vm, Seen>,
  { vm, actions: identity }: Identified<Vm>,
  pass: Pass<Spec>,
): Promise<EnsureResult> {
  const actions = [...identity];
  const busy = steps.busy?.(vm);
  if (busy) return { state: 'InProgress', taskRef: pass.request.taskRef ?? busy.taskRef, message: busy.message, actions };
  const observed = await steps.observe(vm, pass);
  if (observed === 'Gone') return { state: 'Absent' };
  let seen = observed;
  const pending: string[] = [];
  const byName: Readonly<Record<StepName, ConvergeStep<Spec, Vm, Seen> | undefined>> = {
    WriteGuestData: steps.writeGuestData,
    Resize: steps.resize,
    Power: steps.power,
  };
  for (const name of planSteps(pass.options, actions.includes('Created'), seen.power)) {
    const step = await byName[name]?.(vm, seen, pass);
    if (!step) continue;
    actions.push(...(step.actions ?? []));
    if (step.state === 'Started')
      return { state: 'InProgress', taskRef: step.taskRef, message: step.message, actions, ...(step.reason ? { reason: step.reason } : {}) };
    seen = step.seen;
    if (step.pending) pending.push(step.pending);
  }
  const { pending: reported, ...report } = await steps.report(vm, seen, pass);
  if (reported) pending.push(reported);
  return { state: 'Present', observation: { ...report, actions, ...(pending.length > 0 ? { pending: pending.join('; ') } : {}) } };
}
