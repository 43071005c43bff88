// The "cloud" behind the fake backend: VMs in memory, created by a task that
// runs for `createMs` (as a vSphere clone runs), so the provider role must
// start it, remember it and pick it up on a later pass.
import { randomUUID } from 'node:crypto';
import type { PowerState } from '../../../infra/api/common.js';

export interface FakeVm {
  readonly uuid: string;
  readonly name: string;
  readonly cpus: number;
  readonly memoryMiB: number;
  powerState: PowerState;
  userData: string | undefined;
}

interface CreateTask {
  readonly uuid: string;
  done: boolean;
}

export class FakeCloud {
  readonly vms = new Map<string, FakeVm>();
  private readonly tasks = new Map<string, CreateTask>();
  /** Every call, for tests that count them. */
  readonly calls: string[] = [];

  constructor(private readonly createMs: number) {}

  find(uuid: string): FakeVm | undefined {
    this.calls.push('find');
    return this.vms.get(uuid);
  }

  /** Starts creating a VM; it exists once the task is done. */
  startCreate(vm: Omit<FakeVm, 'powerState'>): string {
    this.calls.push('startCreate');
    const id = `task-${randomUUID()}`;
    const task: CreateTask = { uuid: vm.uuid, done: false };
    this.tasks.set(id, task);
    setTimeout(() => {
      this.vms.set(vm.uuid, { ...vm, powerState: 'PoweredOff' });
      task.done = true;
    }, this.createMs).unref();
    return id;
  }

  /** Undefined for a task this cloud never ran. */
  taskDone(id: string): boolean | undefined {
    this.calls.push('taskDone');
    return this.tasks.get(id)?.done;
  }

  /** While true, destroy() leaves the VM and says it is still going (a long backend delete), until a test releases it. */
  holdDestroys = false;

  /** Whether the VM existed and is gone now; undefined while destroys are held (the VM stays). */
  destroy(uuid: string): boolean | undefined {
    this.calls.push('destroy');
    if (this.holdDestroys) return undefined;
    return this.vms.delete(uuid);
  }
}
