// status.taskRef of a ProxmoxMachine: the PVE task a pass started and a later
// pass reads (ADR 14), with the VM it works on. A UPID alone does not say which
// VM a clone makes (its id is the template's VMID, its node the template's),
// so the reference is `<node>/<vmid> <UPID>` (pure).
import { parseUpid, type Upid } from '../client/upid.js';
import type { VmRef } from '../client/qemu.js';

export interface TaskRef {
  /** The VM the task creates or changes. */
  readonly vm: VmRef;
  readonly upid: Upid;
}

export function formatTaskRef(vm: VmRef, upid: string): string {
  return `${vm.node}/${vm.vmid} ${upid}`;
}

/** The reference, or undefined when it is not one of ours (another version's, or hand-written): treated as no task. */
export function parseTaskRef(ref: string | undefined): TaskRef | undefined {
  const match = /^([a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)\/([1-9][0-9]{2,8}) (\S+)$/.exec(ref ?? '');
  if (!match?.[1] || !match[2] || !match[3]) return undefined;
  const upid = parseUpid(match[3]);
  return upid ? { vm: { node: match[1], vmid: Number(match[2]) }, upid } : undefined;
}
