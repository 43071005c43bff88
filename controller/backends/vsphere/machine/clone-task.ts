// The clone of a VSphereMachine's VM: CloneVM_Task started with the machine's BIOS UUID and
// mark, never awaited (its task is kept in status.taskRef), and read again on later passes.
// A task's result is only where the machine recipe looks first: the VM is the machine's by
// its UUID and mark, never because a task says so (status.taskRef can name any task).
import { VSPHERE_MAX_VM_NAME_LENGTH, type VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { EnsureOptions, MachineRequest } from '../../backend.js';
import type { Creation, TaskReading } from '../../kit/machine/steps.js';
import { ownerMark } from '../../ownership.js';
import { settled } from '../client/tasks.js';
import type { ManagedObjectReference } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { isVsphereFault } from '../client/vsphere-fault.js';
import { buildCloneSpec } from './clone-spec.js';
import type { CloneTargetCache } from './clone-target-cache.js';
import { cloneSourceOf } from './clone-targets.js';

type Request = MachineRequest<VSphereMachineSpec>;

/**
 * vCenter's longest VM name. A longer one fails CloneVM_Task only once the task runs, so it is refused before any clone:
 * admission refuses it on a VSphereMachine, but not on a VirtualMachine, which names no backend.
 */
const MAX_VM_NAME_LENGTH = VSPHERE_MAX_VM_NAME_LENGTH;

/**
 * The task `taskRef` names, taken as the machine's clone (the only task a vSphere pass
 * remembers). A clone that lost the race to an earlier one (DuplicateName: a crash between
 * CloneVM_Task and the status write) ended too: the VM already there is the machine's if it
 * has its UUID and mark. Throws TaskFailed for a clone that failed otherwise.
 */
export async function readCloneTask(client: VsphereClient, request: Request, taskRef: string): Promise<TaskReading> {
  let info;
  try {
    info = await client.tasks.info({ type: 'Task', value: taskRef });
  } catch (err) {
    // vCenter keeps finished tasks for a while only: a forgotten task is no task; its VM is found by UUID.
    if (isBackendError(err, BackendErrorKind.NotFound) || isVsphereFault(err, 'ManagedObjectNotFound')) return { state: 'None' };
    throw err;
  }
  const task = `${info.name} ${taskRef}`;
  try {
    // The info just read tells the end too: no second read of the task.
    const outcome = settled(info);
    if (!outcome) return { state: 'Running', task, ...(info.progress === undefined ? {} : { progress: info.progress }) };
    // A clone's result is its VM's moref; any other task's result is no VM to look at.
    const target = outcome.result?.attribute('type') === 'VirtualMachine' ? outcome.result.text : '';
    return { state: 'Ended', task, creates: true, actions: ['Created'], ...(target === '' ? {} : { target }) };
  } catch (err) {
    if (!isVsphereFault(err, 'DuplicateName')) throw err;
    const missing = new BackendError(
      BackendErrorKind.Rejected,
      `a VM named ${request.name} already exists in the target folder and is not this machine's (its BIOS UUID is not ${request.uuid})`,
    );
    return { state: 'Ended', task, creates: true, actions: ['Adopted'], missing };
  }
}

/** Starts CloneVM_Task with the machine's UUID and mark, then looks at it once: a quick clone (a linked one) may be over already. */
export async function startClone(client: VsphereClient, cloneTargets: CloneTargetCache, request: Request, options: EnsureOptions): Promise<Creation> {
  // A name vCenter will refuse: no real task, started again at every retry, just to fail.
  if (request.name.length > MAX_VM_NAME_LENGTH) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `the VM name ${request.name} has ${request.name.length} characters; vCenter takes at most ${MAX_VM_NAME_LENGTH} characters: give the machine a shorter name`,
    );
  }
  const source = cloneSourceOf(request.providerSettings);
  const { targets, templateHardware } = await cloneTargets.resolve(client, request.spec, request.raw, source);
  const spec = buildCloneSpec(request.spec, request.uuid, ownerMark(request.owner), targets, templateHardware);
  let task: ManagedObjectReference;
  try {
    task = await client.vms.startClone(targets.template, targets.folder, request.name, spec);
  } catch (err) {
    // Maybe something it names went away: the next pass looks the targets up afresh.
    cloneTargets.forget(client, request.spec, request.raw, source);
    throw err;
  }
  options.log.info({ task: task.value, uuid: request.uuid, datacenter: targets.datacenter.name, cluster: targets.cluster.name }, 'CloneVM_Task started');
  const reading = await readCloneTask(client, request, task.value);
  return reading.state === 'Ended' ? reading : { state: 'Started', taskRef: task.value, message: `CloneVM_Task ${task.value} started` };
}
