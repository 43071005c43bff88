// Simulated PVE tasks: a UPID at once, the work's effect when the task ends
// after a delay, and failures on demand (the next task of a type ends with a
// given exit status and no effect, or with the effect's own error). Each keeps
// its log as PVE writes it (`TASK OK` or `TASK ERROR: …` last); a held task
// runs until the test releases it, and says how far its disk copy is when told.
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
  /** The task log's lines, as GET …/tasks/{upid}/log numbers them from 1. */
  readonly log: string[];
  /** The bytes a clone copies (its full-clone disks), for its progress lines. */
  readonly copyBytes: number;
}

/** What a task logs as it starts, and the bytes it copies (a full clone's disks). */
export interface TaskStartLog {
  readonly lines?: readonly string[];
  readonly copyBytes?: number;
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
  /** Task types whose next task is held (runs until released). */
  private readonly toHold: string[] = [];
  /** Held tasks: how each ends once released. */
  private readonly held = new Map<string, () => void>();
  private pid = 0x1000;

  constructor(
    /** Run time of a task of `type`. */
    private readonly delayOf: (type: string) => number,
  ) {}

  /** Starts a task; `work` runs when it ends, `undo` when it fails (a clone's half-made VM). Answers the UPID. */
  start(node: string, type: string, id: string, user: string, work: TaskWork, undo?: () => void, log: TaskStartLog = {}): string {
    this.pid += 1;
    const starttime = Math.floor(Date.now() / 1000);
    // A UPID field cannot hold ':' or spaces (PVE::Tools upid_decode): a volume id is escaped.
    const fields = { node, type, id: id.replace(/:/g, '\\x3A').replace(/\s/g, '_'), user, pid: this.pid, pstart: 1000 + this.pid, starttime };
    const task: SimTask = {
      ...fields,
      upid: formatUpid(fields),
      status: 'running',
      exitstatus: undefined,
      log: [...(log.lines ?? [])],
      copyBytes: log.copyBytes ?? 0,
    };
    this.byUpid.set(task.upid, task);
    const hold = this.toHold.indexOf(type);
    if (hold >= 0) {
      this.toHold.splice(hold, 1);
      this.held.set(task.upid, () => this.finish(task, work, undo));
      return task.upid;
    }
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

  /** The next task of `type` runs until release(): a copy as slow as the test wants, without a clock. */
  holdNext(type: string): void {
    this.toHold.push(type);
  }

  /** The held tasks still running. */
  get holding(): SimTask[] {
    return [...this.held.keys()].map((upid) => this.get(upid));
  }

  /** A held task's disk copy reached `percent`: it logs the progress line PVE's qemu-img convert does. */
  copied(upid: string, percent: number): void {
    const task = this.get(upid);
    if (!this.held.has(upid)) throw new Error(`simulator: task ${upid} is not held`);
    task.log.push(`transferred ${renderBytes((task.copyBytes * percent) / 100)} of ${renderBytes(task.copyBytes)} (${percent.toFixed(2)}%)`);
  }

  /** Ends a held task now, as its delay would have. */
  release(upid: string): void {
    const end = this.held.get(upid);
    if (!end) throw new Error(`simulator: task ${upid} is not held`);
    this.held.delete(upid);
    end();
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
    task.log.push(exitstatus === 'OK' ? 'TASK OK' : `TASK ERROR: ${exitstatus}`);
    task.status = 'stopped';
    task.exitstatus = exitstatus;
  }
}

/** PVE::Tools::render_bytes with one decimal: `2.0 GiB`. */
function renderBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit] ?? 'B'}`;
}
