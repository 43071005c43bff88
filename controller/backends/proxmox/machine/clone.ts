// Starting the clone of a machine's VM (ADR 14: started, not awaited). The
// VMID comes from /cluster/nextid; another writer may take it before the clone
// (PVE answers "VM <id> already exists"), and the next free id is asked for
// again. The clone call carries the machine's name and, in its description,
// its UUID and ownership mark (vm-marks.ts), so the VM is known for the
// machine's from its first moment, before a crash could lose the task.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { EnsureOptions, MachineRequest } from '../../backend.js';
import type { Creation } from '../../kit/machine/steps.js';
import { isProxmoxError } from '../client/proxmox-error.js';
import type { VmRef } from '../client/qemu.js';
import type { ClusterResource } from '../client/wire-types.js';
import { formatTaskRef } from './task-ref.js';
import type { PassView } from './vm-locator.js';
import { cloneDescription } from './vm-marks.js';

/** How often a VMID taken under our feet is replaced by the next free one within one pass. */
const NEXTID_ATTEMPTS = 5;

type Request = MachineRequest<ProxmoxMachineSpec>;

/** The node the machine runs on: its spec's, else its failure domain's. */
export function nodeOf(request: Request): string {
  const node = request.spec.node ?? request.raw.node;
  if (!node)
    throw new BackendError(
      BackendErrorKind.Rejected,
      `ProxmoxMachine ${request.namespace}/${request.name} has no spec.node and its failure domain no raw node`,
    );
  return node;
}

/**
 * The VM to clone for `node`: the template itself when it is on that node;
 * else a template of the same name on that node (a template per node, the
 * usual way with local storage); else the template on its own node, cloned
 * with `target` (PVE allows that when its disks are on shared storage, and
 * says so when they are not).
 */
export function cloneSource(vms: readonly ClusterResource[], templateVmid: number, node: string): { source: VmRef; target?: string } {
  const template = vms.find((r) => r.vmid === templateVmid);
  // The same words whether there is no such VMID or it is a VM: the refusal tells nobody which VMs exist.
  if (!template?.node || template.template !== true) {
    throw new BackendError(BackendErrorKind.Rejected, `spec.templateVmid ${templateVmid}: no template with this VMID in the cluster`, {
      reason: Reason.TemplateNotFound,
    });
  }
  if (template.node === node) return { source: { node, vmid: templateVmid } };
  const local = vms.find((r) => r.template === true && r.node === node && r.name !== undefined && r.name === template.name && r.vmid !== undefined);
  if (local?.vmid !== undefined) return { source: { node, vmid: local.vmid } };
  return { source: { node: template.node, vmid: templateVmid }, target: node };
}

export async function startClone(view: PassView, request: Request, options: EnsureOptions): Promise<Creation> {
  const node = nodeOf(request);
  const { spec } = request;
  const { source, target } = cloneSource(await view.vms(), spec.templateVmid, node);
  const full = (spec.cloneMode ?? 'Full') === 'Full';
  for (let attempt = 1; attempt <= NEXTID_ATTEMPTS; attempt += 1) {
    const newid = await view.client.cluster.nextId();
    let upid: string;
    try {
      upid = await view.client.qemu.clone(source, {
        newid,
        name: request.name,
        description: cloneDescription(request.owner, request.uuid),
        full,
        ...(full && spec.storage !== undefined ? { storage: spec.storage } : {}),
        ...(target !== undefined ? { target } : {}),
        ...(spec.pool !== undefined ? { pool: spec.pool } : {}),
      });
    } catch (err) {
      // Someone took the id between nextid and the clone: ask for the next one.
      if (isProxmoxError(err, 'AlreadyExists')) {
        options.log.info({ vmid: newid, attempt }, 'VMID taken before the clone; asking for the next one');
        continue;
      }
      throw err;
    }
    const vm = { node, vmid: newid };
    view.remember(request, vm);
    options.log.info({ task: upid, uuid: request.uuid, vmid: newid, node, template: source.vmid, full }, 'Clone started');
    const how = `${full ? 'full' : 'linked'} clone of template ${source.vmid}${target ? ` (on ${source.node})` : ''}`;
    return { state: 'Started', taskRef: formatTaskRef(vm, upid), message: `${how} to VM ${newid} on ${node} started` };
  }
  throw new BackendError(BackendErrorKind.Unreachable, `every VMID /cluster/nextid offered was taken before the clone (${NEXTID_ATTEMPTS} times): retrying`);
}
