// Waiting for a vim25 Task: poll `info` until success or error, with a deadline.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { pollUntilEnded } from '../../kit/wire/deadline-poll.js';
import type { PropertyCollector } from './property-collector.js';
import type { ManagedObjectReference, TaskState } from './vim-types.js';
import { faultFromTask } from './vsphere-fault.js';
import type { XmlElement } from './xml-element.js';

export interface TaskWaitOptions {
  /** Give up after this long; the task goes on on the server. @default 600000 (10 min) */
  readonly timeoutMs?: number;
  /** First poll interval; it doubles up to `maxPollMs`. @default 100 */
  readonly initialPollMs?: number;
  /** Longest poll interval (upstream polls every 3 s). @default 3000 */
  readonly maxPollMs?: number;
  readonly signal?: AbortSignal;
}

/** A finished task: its `info.result` when it has one (e.g. the new VM of a clone). */
export interface TaskOutcome {
  readonly result: XmlElement | undefined;
}

export interface TaskInfo {
  readonly state: TaskState;
  /** Method name, e.g. `CloneVM_Task`. */
  readonly name: string;
  readonly result: XmlElement | undefined;
  readonly error: XmlElement | undefined;
  /** info.progress: percent done, while it runs, when the task reports it. */
  readonly progress: number | undefined;
}

export class Tasks {
  constructor(private readonly properties: PropertyCollector) {}

  async info(task: ManagedObjectReference): Promise<TaskInfo> {
    const content = await this.properties.retrieveOne(task, ['info']);
    const info = content.props.get('info');
    const state = info?.childText('state');
    if (info === undefined || !isTaskState(state)) throw new Error(`Task ${task.value}: no info.state`);
    const progress = Number(info.childText('progress') ?? Number.NaN);
    return {
      state,
      name: info.childText('name') ?? task.value,
      result: info.child('result'),
      error: info.child('error'),
      progress: Number.isFinite(progress) ? progress : undefined,
    };
  }

  /**
   * Resolves when the task succeeds. A task that ends in error throws a
   * VsphereFault of kind TaskFailed carrying the fault type; running past the
   * deadline throws BackendError Unreachable with code `TaskDeadlineExceeded`.
   */
  wait(task: ManagedObjectReference, options: TaskWaitOptions = {}): Promise<TaskOutcome> {
    return pollUntilEnded(
      () => this.info(task),
      settled,
      (info) =>
        new BackendError(BackendErrorKind.Unreachable, `${info.name} (${task.value}) still ${info.state} at the deadline`, { code: 'TaskDeadlineExceeded' }),
      {
        timeoutMs: options.timeoutMs ?? 600_000,
        initialPollMs: options.initialPollMs ?? 100,
        maxPollMs: options.maxPollMs ?? 3_000,
        ...(options.signal ? { signal: options.signal } : {}),
      },
    );
  }
}

/**
 * The outcome of a finished task read with `info`: its result, or the fault it
 * ended with, thrown; undefined while it is queued or running.
 */
export function settled(info: TaskInfo): TaskOutcome | undefined {
  if (info.state === 'success') return { result: info.result };
  if (info.state === 'error') {
    if (info.error === undefined) throw new BackendError(BackendErrorKind.TaskFailed, `${info.name}: failed without a fault`);
    throw faultFromTask(info.name, info.error);
  }
  return undefined;
}

function isTaskState(state: string | undefined): state is TaskState {
  return state === 'queued' || state === 'running' || state === 'success' || state === 'error';
}
