// Simulated PVE tasks: a UPID at once, the work's effect when the task ends
// after a delay, and failures on demand (the next task of a type ends with a
// given exit status and no effect, or with the effect's own error).
import { formatUpid } from '../../../controller/backends/proxmox/client/upid.js';
import { PveHttpError } from './sim-errors.js';

export interface SimTask {
  readonly upid: string;
  readonly node: string;
  readonly type: string;
  readonly id: string;
  readonly user: string;
  readonly pid: number;
  readonly pstart: number;
  readonly starttime: number;
  status: 'running' | 'stopped';
  exitstatus: string | undefined;
}

/** A task's work: runs when it ends; throwing (or returning a string) fails the task with that text. */
export type TaskWork = () => string | void;

export interface TaskFailure {
  readonly type?: string;
  readonly id?: string;
  readonly exitstatus: string;
}

export class SimTasks {
  readonly byUpid = new Map<string, SimTask>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly failures: TaskFailure[] = [];
  private pid = 0x1000;

  constructor(
    /** Run time of a task of `type`. */
    private readonly delayOf: (type: string) => number,
  ) {}

  /** Starts a task; `work` runs when it ends, `undo` when it fails (a clone's half-made VM). Answers the UPID. */
  start(node: string, type: string, id: string, user: string, work: TaskWork, undo?: () => void): string {
    this.pid += 1;
    const starttime = Math.floor(Date.now() / 1000);
    // A UPID field cannot hold ':' or spaces (PVE::Tools upid_decode): a volume id is escaped.
    const fields = { node, type, id: id.replace(/:/g, '\\x3A').replace(/\s/g, '_'), user, pid: this.pid, pstart: 1000 + this.pid, starttime };
    const task: SimTask = { ...fields, upid: formatUpid(fields), status: 'running', exitstatus: undefined };
    this.byUpid.set(task.upid, task);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.finish(task, work, undo);
    }, this.delayOf(type));
    timer.unref();
    this.timers.add(timer);
    return task.upid;
  }

  /** The next task matching `failure` ends with its exit status, without its effect. */
  failNext(failure: TaskFailure): void {
    this.failures.push(failure);
  }

  get(upid: string): SimTask {
    const task = this.byUpid.get(upid);
    if (!task) throw new PveHttpError(500, `no such task '${upid}'`);
    return task;
  }

  /** True when no task is running (for tests that wait for quiet). */
  get idle(): boolean {
    return [...this.byUpid.values()].every((task) => task.status === 'stopped');
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private finish(task: SimTask, work: TaskWork, undo: (() => void) | undefined): void {
    const index = this.failures.findIndex((f) => (f.type === undefined || f.type === task.type) && (f.id === undefined || f.id === task.id));
    let exitstatus = 'OK';
    if (index >= 0) {
      exitstatus = this.failures[index]?.exitstatus ?? 'failed';
      this.failures.splice(index, 1);
    } else {
      try {
        exitstatus = work() ?? 'OK';
      } catch (error) {
        exitstatus = error instanceof Error ? error.message : String(error);
      }
    }
    if (exitstatus !== 'OK') undo?.();
    task.status = 'stopped';
    task.exitstatus = exitstatus;
  }
}
