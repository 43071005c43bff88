// Deleting or releasing a machine's VM, the same on every backend (`MachineBackend.destroy`
// and `release`): a task of the machine still running is waited out (letting go now would
// leave what it is about to make to nobody); one that failed made nothing. Then the VM is
// found by UUID and its marks decide: a VM not this machine's is never destroyed nor released
// (NotOwned). A deletion that finds no VM removes what only the machine names; a release
// takes the mark away and leaves everything else as it is.
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest, ReleaseResult } from '../../backend.js';
import { decideRelease, ownerMark } from '../../ownership.js';
import { own, readTask } from './converge.js';
import { waitingFor } from './decide.js';
import type { ConvergeSteps, Found, IdentitySteps, LetGoSteps, Observed, TaskReading } from './steps.js';

type Steps<Spec, Vm> = Pick<IdentitySteps<Spec, Vm>, 'readTask' | 'find'> & Pick<ConvergeSteps<Spec, Vm, Observed>, 'busy'> & LetGoSteps<Spec, Vm>;
type Waiting = { readonly state: 'InProgress'; readonly message: string };

export async function destroyMachineVm<Spec, Vm>(steps: Steps<Spec, Vm>, request: MachineRequest<Spec>, options: DestroyOptions): Promise<DestroyResult> {
  const found = await findToLetGo(steps, request, 'deleting');
  if (found && 'state' in found) return found;
  const result = found ? await destroyOwned(steps, found, request, options) : await destroyLeftovers(steps, request, options);
  if (result.state === 'Gone') steps.forget?.(request);
  return result;
}

export async function releaseMachineVm<Spec, Vm>(steps: Steps<Spec, Vm>, request: MachineRequest<Spec>, options: DestroyOptions): Promise<ReleaseResult> {
  const found = await findToLetGo(steps, request, 'releasing');
  if (found && 'state' in found) return found;
  if (!found) {
    steps.forget?.(request);
    return { state: 'Absent' };
  }
  if (decideRelease(request.owner, request.uuid, found.marks) === 'Unmark') {
    const vm = own(request, found);
    const busy = steps.busy?.(vm);
    if (busy) return { state: 'InProgress', message: busy.message };
    options.log.info({ vm: found.ref, uuid: request.uuid }, 'Removing the ownership mark: the VM is retained');
    await steps.unmark(vm, ownerMark(request.owner), request);
  }
  steps.forget?.(request);
  return { state: 'Released', ref: found.ref };
}

async function destroyOwned<Spec, Vm>(
  steps: Steps<Spec, Vm>,
  found: Found<Vm>,
  request: MachineRequest<Spec>,
  options: DestroyOptions,
): Promise<DestroyResult> {
  const vm = own(request, found);
  const busy = steps.busy?.(vm);
  if (busy) return { state: 'InProgress', message: busy.message };
  return steps.destroy(vm, request, options);
}

function destroyLeftovers<Spec, Vm>(steps: Steps<Spec, Vm>, request: MachineRequest<Spec>, options: DestroyOptions): Promise<DestroyResult> {
  return steps.destroyLeftovers ? steps.destroyLeftovers(request, options) : Promise.resolve({ state: 'Gone', existed: false });
}

/** The VM with the machine's UUID once no task of the machine runs; what to say while one does. */
async function findToLetGo<Spec, Vm>(steps: Steps<Spec, Vm>, request: MachineRequest<Spec>, ending: string): Promise<Found<Vm> | Waiting | undefined> {
  const task = await readTask(steps, request).catch(madeNothing);
  if (task.state === 'Running') return { state: 'InProgress', message: waitingFor(task.task, ending) };
  return steps.find(request, { ...(task.state === 'Ended' && task.target ? { hint: task.target } : {}), provisioned: false });
}

/** A task that failed (or lost its VM's name to another) made nothing of this machine's. */
function madeNothing(err: unknown): TaskReading {
  if (isBackendError(err, BackendErrorKind.TaskFailed) || isBackendError(err, BackendErrorKind.Rejected)) return { state: 'None' };
  throw err;
}
