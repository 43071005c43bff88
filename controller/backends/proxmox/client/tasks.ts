// PVE tasks: a call that starts work answers a UPID; the work's outcome is the
// task's `exitstatus` once it has stopped. A provider must not hold a worker
// on a long task (DESIGN §3): it keeps the UPID and reads `status` on a later
// pass; `wait` is for the short ones (a config change, a stop).
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { pollUntilEnded } from '../../kit/wire/deadline-poll.js';
import { Endpoints } from './endpoints.js';
import type { ProxmoxTransport } from './transport.js';
import { requireUpid } from './upid.js';
import type { TaskStatus } from './wire-types.js';

export interface TaskWaitOptions {
  /** Give up after this long; the task goes on in PVE. @default 300000 (5 min) */
  readonly timeoutMs?: number;
  /** First poll interval; it doubles up to `maxPollMs`. @default 250 */
  readonly initialPollMs?: number;
  /** Longest poll interval. @default 2000 */
  readonly maxPollMs?: number;
}

/** The task failed: a BackendError of kind TaskFailed with PVE's exit status. */
export class ProxmoxTaskError extends BackendError {
  constructor(readonly task: TaskStatus) {
    super(
      BackendErrorKind.TaskFailed,
      `task ${task.type}${task.id === '' ? '' : ` ${task.id}`} on ${task.node} failed: ${task.exitstatus ?? 'no exit status'}`,
      {
        code: 'TaskFailed',
      },
    );
    this.name = 'ProxmoxTaskError';
  }
}

export class Tasks {
  constructor(private readonly transport: ProxmoxTransport) {}

  /** One read of the task's status (on the node the UPID names). */
  status(upid: string): Promise<TaskStatus> {
    const { node } = requireUpid(upid, 'task status');
    return this.transport.call(Endpoints.taskStatus, { node, upid });
  }

  /**
   * Resolves with the final status when the task ends well; throws
   * ProxmoxTaskError (TaskFailed) when it ends otherwise, and BackendError
   * Unreachable with code `TaskDeadlineExceeded` when still running at the deadline.
   */
  wait(upid: string, options: TaskWaitOptions = {}): Promise<TaskStatus> {
    return pollUntilEnded(
      () => this.status(upid),
      (status) => (isTaskDone(status) ? status : undefined),
      (status) =>
        new BackendError(BackendErrorKind.Unreachable, `task ${status.type} ${status.id} on ${status.node} still running at the deadline`, {
          code: 'TaskDeadlineExceeded',
        }),
      { timeoutMs: options.timeoutMs ?? 300_000, initialPollMs: options.initialPollMs ?? 250, maxPollMs: options.maxPollMs ?? 2_000 },
    );
  }
}

/**
 * True when the task has stopped and succeeded, false while it runs; throws
 * ProxmoxTaskError when it stopped with an error. `WARNINGS: <n>` is a
 * success: PVE ends tasks so when they logged warnings and still did the work.
 */
export function isTaskDone(status: TaskStatus): boolean {
  if (status.status === 'running') return false;
  if (isTaskSuccess(status.exitstatus)) return true;
  throw new ProxmoxTaskError(status);
}

function isTaskSuccess(exitstatus: string | undefined): boolean {
  return exitstatus === 'OK' || (exitstatus !== undefined && /^WARNINGS: \d+$/.test(exitstatus));
}
