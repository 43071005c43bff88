// PVE tasks: a call that starts work answers a UPID; the work's outcome is the
// task's `exitstatus` once it has stopped. A provider must not hold a worker
// on a long task (DESIGN §3): it keeps the UPID and reads `status` on a later
// pass; `wait` is for the short ones (a config change, a stop).
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { pollUntilEnded } from '../../kit/wire/deadline-poll.js';
import { Endpoints } from './endpoints.js';
import type { ProxmoxTransport } from './transport.js';
import { requireUpid } from './upid.js';
import type { TaskLogLine, TaskStatus } from './wire-types.js';

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

  /** Lines of the task's log, the first `limit` from line `start` (0-based). */
  log(upid: string, range: { readonly start?: number; readonly limit?: number } = {}): Promise<TaskLogLine[]> {
    const { node } = requireUpid(upid, 'task log');
    return this.transport.call(Endpoints.taskLog, { node, upid, ...range });
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

// What PVE logs while it copies a disk: qemu-img convert's progress as
// `transferred 2.0 GiB of 10.0 GiB (20.00%)`, a drive mirror's as
// `drive-scsi0: transferred … (20.00%) in 4s` (PVE::QemuServer).
const TRANSFERRED = /transferred .* \((\d+(?:\.\d+)?)%\)/;

/** The percent of the last copy progress line of a task's log: how far the disk being copied is. Undefined when none says. */
export function copyProgress(lines: readonly TaskLogLine[]): number | undefined {
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const match = TRANSFERRED.exec(lines[i]?.t ?? '');
    if (match?.[1] !== undefined) return Number(match[1]);
  }
  return undefined;
}
