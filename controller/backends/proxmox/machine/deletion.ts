// Deleting a machine's VM: stop it (hard: the machine is going), then
// `DELETE …?purge=1&destroy-unreferenced-disks=1`, then look again until it is
// gone, then remove its seed ISO. Each PVE task is started and read on a later
// pass, never awaited (ADR 14); DestroyResult has no taskRef, so the task is
// remembered here, in the role's memory, per machine. A restart forgets it: the
// next pass finds the VM locked by the destroy, or stopped, or gone, and goes on.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import { assertOwnedBy } from '../../ownership.js';
import { isTaskDone } from '../client/tasks.js';
import { nodeOf } from './clone.js';
import { reachable } from './reachable.js';
import { seedFileName, seedStorage, seedVolume } from './seed.js';
import { describeTask, earlierTaskEnded } from './tasks.js';
import { formatTaskRef, parseTaskRef } from './task-ref.js';
import type { PassView } from './vm-locator.js';
import { markOf } from './vm-marks.js';

type Request = MachineRequest<ProxmoxMachineSpec>;

export class MachineDeletion {
  /** Machine (endpoint + UUID) → the stop or destroy task started for it, and whether its VM had our seed ISO attached. */
  private readonly tasks = new Map<string, { readonly taskRef: string; readonly hadSeed: boolean }>();

  async destroy(view: PassView, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
    // A task of the machine still running (a clone, a start): deleting now would leave what it is about to make.
    const earlier = await earlierTaskEnded(view.client, request.taskRef);
    if (earlier.state === 'running') return { state: 'InProgress', message: `${earlier.message} before deleting the VM` };

    const key = `${view.client.endpoint}\n${request.uuid}`;
    const started = this.tasks.get(key);
    if (started) {
      const task = parseTaskRef(started.taskRef);
      const status = task && (await view.client.tasks.status(task.upid.upid).catch(() => undefined));
      if (task && status && status.status === 'running') return { state: 'InProgress', message: `waiting for the ${describeTask(task)} to end` };
      this.tasks.delete(key);
      // A failed stop or destroy throws (TaskFailed): said on the machine, tried again.
      if (status) isTaskDone(status);
    }

    // Whether the machine was provisioned is not known here: a clone of ours not yet configured is found too, a PVE copy of a configured VM is not (matchVm).
    const found = await reachable(nodeOf(request), () => view.find(request, { hint: earlier.state === 'done' ? earlier.task.vm : undefined }));
    if (!found) {
      // Known to have had none: no call. Not known (a restart, or no VM seen): try; not there is fine.
      if (started?.hadSeed !== false) await this.removeSeed(view, request, log);
      view.forget(request);
      return { state: 'Gone', existed: started !== undefined };
    }
    const { ref, config } = found;
    assertOwnedBy(request.owner, request.uuid, markOf(config.description));
    if (config.lock !== undefined) return { state: 'InProgress', message: `VM ${ref.vmid} on ${ref.node} is locked (${config.lock})` };
    const hadSeed = config.ide2?.includes(seedFileName(request.uuid)) ?? false;
    const status = await reachable(ref.node, () => view.client.qemu.status(ref));
    if (status.status === 'running') {
      const upid = await view.client.qemu.stop(ref, { 'overrule-shutdown': true });
      this.tasks.set(key, { taskRef: formatTaskRef(ref, upid), hadSeed });
      log.info({ vmid: ref.vmid, node: ref.node, task: upid }, 'Stopping the VM to delete it');
      return { state: 'InProgress', message: `stopping VM ${ref.vmid} on ${ref.node} to delete it` };
    }
    const upid = await view.client.qemu.delete(ref, { purge: true, 'destroy-unreferenced-disks': true });
    this.tasks.set(key, { taskRef: formatTaskRef(ref, upid), hadSeed });
    log.info({ vmid: ref.vmid, node: ref.node, task: upid, uuid: request.uuid }, 'Destroying the VM');
    return { state: 'InProgress', message: `destroying VM ${ref.vmid} on ${ref.node}` };
  }

  /** The seed ISO, when the machine had one; not there is fine. Its deletion is not waited for. */
  private async removeSeed(view: PassView, request: Request, log: DestroyOptions['log']): Promise<void> {
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
}
