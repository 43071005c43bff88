// Deleting a machine's VM, once the machine recipe found it by UUID and mark: stop it (hard:
// the machine is going), then `DELETE …?purge=1&destroy-unreferenced-disks=1`, then look
// again until it is gone, then remove its seed ISO. Each PVE task is started and read on a
// later pass, never awaited (ADR 14); DestroyResult has no taskRef, so the task is remembered
// here, in the role's memory, per machine. A restart forgets it: the next pass finds the VM
// locked by the destroy, or stopped, or gone, and goes on.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import type { Owned } from '../../kit/machine/steps.js';
import { isTaskDone } from '../client/tasks.js';
import { nodeOf } from './clone.js';
import { reachable } from './reachable.js';
import { seedFileName, seedStorage, seedVolume } from './seed.js';
import { describeTask } from './tasks.js';
import { formatTaskRef, parseTaskRef } from './task-ref.js';
import type { FoundVm, PassView } from './vm-locator.js';

type Request = MachineRequest<ProxmoxMachineSpec>;

interface Started {
  readonly taskRef: string;
  /** Whether the VM had our seed ISO attached. */
  readonly hadSeed: boolean;
}

export class MachineDeletion {
  /** Machine (endpoint + UUID) → the stop or destroy task started for it. */
  private readonly tasks = new Map<string, Started>();

  /** The next step of deleting the machine's own VM. */
  async destroy(view: PassView, { ref, config }: Owned<FoundVm>, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
    const waiting = await this.earlierStep(view, request);
    if (waiting) return waiting;
    const hadSeed = config.ide2?.includes(seedFileName(request.uuid)) ?? false;
    const status = await reachable(ref.node, () => view.client.qemu.status(ref));
    if (status.status === 'running') {
      const upid = await view.client.qemu.stop(ref, { 'overrule-shutdown': true });
      this.tasks.set(this.key(view, request), { taskRef: formatTaskRef(ref, upid), hadSeed });
      log.info({ vmid: ref.vmid, node: ref.node, task: upid }, 'Stopping the VM to delete it');
      return { state: 'InProgress', message: `stopping VM ${ref.vmid} on ${ref.node} to delete it` };
    }
    const upid = await view.client.qemu.delete(ref, { purge: true, 'destroy-unreferenced-disks': true });
    this.tasks.set(this.key(view, request), { taskRef: formatTaskRef(ref, upid), hadSeed });
    log.info({ vmid: ref.vmid, node: ref.node, task: upid, uuid: request.uuid }, 'Destroying the VM');
    return { state: 'InProgress', message: `destroying VM ${ref.vmid} on ${ref.node}` };
  }

  /** No VM has the UUID (any more): its seed ISO goes, when it had one. */
  async leftovers(view: PassView, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
    const started = this.tasks.get(this.key(view, request));
    const waiting = await this.earlierStep(view, request);
    if (waiting) return waiting;
    // Known to have had none: no call. Not known (a restart, or no VM seen): try; not there is fine.
    if (started?.hadSeed !== false) await removeSeed(view, request, log);
    view.forget(request);
    return { state: 'Gone', existed: started !== undefined };
  }

  /** A stop or destroy task this role started for the machine, still running; a failed one throws (TaskFailed: said on the machine, tried again). */
  private async earlierStep(view: PassView, request: Request): Promise<DestroyResult | undefined> {
    const key = this.key(view, request);
    const started = this.tasks.get(key);
    if (!started) return undefined;
    const task = parseTaskRef(started.taskRef);
    const status = task && (await view.client.tasks.status(task.upid.upid).catch(() => undefined));
    if (task && status && status.status === 'running') return { state: 'InProgress', message: `waiting for the ${describeTask(task)} to end` };
    this.tasks.delete(key);
    if (status) isTaskDone(status);
    return undefined;
  }

  private key(view: PassView, request: Request): string {
    return `${view.client.endpoint}\n${request.uuid}`;
  }
}

/** The seed ISO, when the machine had one; not there is fine. Its deletion is not waited for. */
async function removeSeed(view: PassView, request: Request, log: DestroyOptions['log']): Promise<void> {
  const storage = seedStorage(request.spec, request.raw);
  if (storage === undefined) return;
  const node = nodeOf(request);
  const volume = seedVolume(storage, request.uuid);
  try {
    await view.client.storage.deleteVolume(node, storage, volume);
    log.info({ volume, node }, 'Removed the seed ISO');
  } catch (err) {
    if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
  }
}
