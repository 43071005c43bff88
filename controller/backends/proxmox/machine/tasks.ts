// The task a machine's earlier pass started (status.taskRef), as PVE reports it
// now: one read of its status, never a wait (ADR 14).
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { ProxmoxClient } from '../client/proxmox-client.js';
import { isTaskDone } from '../client/tasks.js';
import { parseTaskRef, type TaskRef } from './task-ref.js';

export type PickedTask =
  /** No task of ours is known (none, not ours, or PVE forgot it). */
  | { readonly state: 'none' }
  | { readonly state: 'running'; readonly task: TaskRef; readonly taskRef: string }
  | { readonly state: 'done'; readonly task: TaskRef };

/** Throws ProxmoxTaskError (TaskFailed) when the task ended in error. */
export async function pickUpTask(client: ProxmoxClient, taskRef: string | undefined): Promise<PickedTask> {
  const task = parseTaskRef(taskRef);
  if (!task || !taskRef) return { state: 'none' };
  let status;
  try {
    status = await client.tasks.status(task.upid.upid);
  } catch (err) {
    // PVE keeps task logs for a while only: a forgotten task is no task; what it made is looked up by UUID.
    if (isBackendError(err, BackendErrorKind.NotFound)) return { state: 'none' };
    throw err;
  }
  return isTaskDone(status) ? { state: 'done', task } : { state: 'running', task, taskRef };
}

/**
 * The machine's earlier task before its VM is deleted or released: a running one is waited out
 * (deleting or letting go now would leave what it is about to make); a failed one left nothing.
 */
export async function earlierTaskEnded(client: ProxmoxClient, taskRef: string | undefined): Promise<Exclude<PickedTask, { state: 'running' }> | { readonly state: 'running'; readonly message: string }> {
  const earlier = await pickUpTask(client, taskRef).catch((err: unknown) => {
    if (isBackendError(err, BackendErrorKind.TaskFailed)) return { state: 'none' } as const;
    throw err;
  });
  return earlier.state === 'running' ? { state: 'running', message: `waiting for the ${describeTask(earlier.task)} to end` } : earlier;
}

/** `qmclone` → `clone`, for messages. */
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
