// The "cloud" behind the fake backend: VMs in memory, created by a task that
// runs for `createMs` (as a vSphere clone runs), so the provider role must
// start it, remember it and pick it up on a later pass. Each VM lives in one
// zone (a failure domain's `raw.zone`), as a VM lives on one vCenter: looked
// for in another zone, it is not there.
import { randomUUID } from 'node:crypto';
import type { UserData } from '../../../controller/backends/user-data-bytes.js';
import type { Ipam } from '../../../infra/api/addressing.js';
import type { PowerState } from '../../../infra/api/machine-fields.js';

export interface FakeVm {
  readonly uuid: string;
  readonly name: string;
  readonly cpus: number;
  readonly memoryMiB: number;
  /** Where it was created (the failure domain's raw.zone). */
  readonly zone: string;
  powerState: PowerState;
  /** The user-data bytes it was created with, as the provider role handed them over. */
  userData: UserData | undefined;
  /** The guest network configuration it was created with (what a real backend renders into its seed or guest info). */
  readonly network?: readonly { readonly name: string; readonly ipam?: Ipam }[];
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
  /** Every VM destroyed, and where it was. */
  readonly destroyed: { readonly uuid: string; readonly zone: string }[] = [];

  constructor(private readonly createMs: number) {}

  /** The VM with this UUID in `zone`. */
  find(uuid: string, zone: string): FakeVm | undefined {
    this.calls.push('find');
    const vm = this.vms.get(uuid);
    return vm?.zone === zone ? vm : undefined;
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

  /** Whether the VM existed in `zone` and is gone now; undefined while destroys are held (the VM stays). */
  destroy(uuid: string, zone: string): boolean | undefined {
    this.calls.push('destroy');
    if (this.holdDestroys) return undefined;
    if (this.vms.get(uuid)?.zone !== zone) return false;
    this.destroyed.push({ uuid, zone });
    return this.vms.delete(uuid);
  }
}
