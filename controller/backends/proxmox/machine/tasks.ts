// The task a machine's earlier pass started (status.taskRef), as PVE reports it now: one read
// of its status, never a wait (ADR 14). The reference names the VM the task works on; the
// machine recipe reads that VM first and takes it only with the machine's UUID and mark.
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { MachineAction } from '../../backend.js';
import type { TaskReading } from '../../kit/machine/steps.js';
import type { ProxmoxClient } from '../client/proxmox-client.js';
import { copyProgress, isTaskDone } from '../client/tasks.js';
import { parseTaskRef, type TaskRef } from './task-ref.js';

/** The action a finished task stands for, as an Event. */
const DONE_ACTIONS: Readonly<Record<string, MachineAction>> = {
  qmclone: 'Created',
  qmstart: 'PoweredOn',
  qmresume: 'PoweredOn',
  qmshutdown: 'PoweredOff',
  qmstop: 'PoweredOff',
  qmsuspend: 'Suspended',
};

/** Tasks that copy disks and log how far (a full clone): their log is read while they run, for the condition message. */
const COPYING: ReadonlySet<string> = new Set(['qmclone']);

/** The log lines read: a clone logs about one line per percent and disk, so these cover a VM of several disks. */
const TASK_LOG_LINES = 1000;

/** Throws ProxmoxTaskError (TaskFailed) when the task ended in error; a reference not of ours (hand-written, another version's) is no task. */
export async function readTask(client: ProxmoxClient, taskRef: string): Promise<TaskReading> {
  const task = parseTaskRef(taskRef);
  if (!task) return { state: 'None' };
  let status;
  try {
    status = await client.tasks.status(task.upid.upid);
  } catch (err) {
    // PVE keeps task logs for a while only: a forgotten task is no task; what it made is looked up by UUID.
    if (isBackendError(err, BackendErrorKind.NotFound)) return { state: 'None' };
    throw err;
  }
  if (!isTaskDone(status)) {
    const progress = COPYING.has(task.upid.type) ? copyProgress(await client.tasks.log(task.upid.upid, { limit: TASK_LOG_LINES })) : undefined;
    return { state: 'Running', task: describeTask(task), ...(progress === undefined ? {} : { progress }) };
  }
  const done = DONE_ACTIONS[task.upid.type];
  return {
    state: 'Ended',
    task: describeTask(task),
    target: `${task.vm.node}/${task.vm.vmid}`,
    creates: task.upid.type === 'qmclone',
    actions: done ? [done] : [],
  };
}

/** `qmclone` → `clone task of VM 101 on pve1`, for messages. */
export function describeTask(task: TaskRef): string {
  const kind = TASK_NAMES[task.upid.type] ?? task.upid.type;
  return `${kind} task of VM ${task.vm.vmid} on ${task.vm.node}`;
}

const TASK_NAMES: Readonly<Record<string, string>> = {
  qmclone: 'clone',
  qmconfig: 'config',
  resize: 'disk resize',
  imgcopy: 'seed ISO upload',
  qmstart: 'start',
  qmshutdown: 'ACPI shutdown',
  qmstop: 'stop',
  qmsuspend: 'suspend',
  qmresume: 'resume',
  qmdestroy: 'destroy',
};
