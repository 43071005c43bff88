// Which VirtualMachines of a namespace to look at again when one of them
// changes. A VM's placement, addresses or labels change what its neighbours
// may do (required anti-affinity, duplicate static addresses), so the
// neighbours waiting on others are rechecked — but only when one of those
// changed: a burst of fifty creations would otherwise requeue every VM after
// every status write of every other.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';

/** Index of the VMs waiting on their neighbours, by namespace: what a change in a namespace of thousands reads. */
export const WAITING_ON_NEIGHBOURS = 'waitingOnNeighbours';

/** `[namespace]` for a VM waiting on its neighbours, for the {@link WAITING_ON_NEIGHBOURS} index. */
export function waitingOnNeighbours(vm: VirtualMachine): string[] {
  return waitsOnNeighbours(vm) ? [vm.metadata.namespace ?? ''] : [];
}

/**
 * The neighbours (from `candidates`, the VMs of the namespace waiting on
 * neighbours or all of them) to recheck after `vm` was added, updated from
 * `old`, or deleted (`old` undefined for add and delete).
 */
export function neighboursToRecheck(candidates: readonly VirtualMachine[], vm: VirtualMachine, old?: VirtualMachine): VirtualMachine[] {
  if (old ? neighbourView(vm) === neighbourView(old) : !claimsAnything(vm)) return [];
  return candidates.filter((other) => other.metadata.name !== vm.metadata.name && waitsOnNeighbours(other));
}

/** What neighbours read of a VM: its labels (selectors), whether it is going, its spec, where it runs, which addresses it holds. */
function neighbourView(vm: VirtualMachine): string {
  return JSON.stringify([vm.metadata.labels, vm.metadata.deletionTimestamp, vm.metadata.generation, vm.status?.scheduled, vm.status?.heldAddresses]);
}

/** A VM that comes or goes matters to neighbours only with a placement or addresses: a new one has neither yet. */
function claimsAnything(vm: VirtualMachine): boolean {
  return !!vm.status?.scheduled || !!vm.status?.heldAddresses?.length;
}

/** Refused a placement, or held back by an address a neighbour holds: a neighbour's change may free it. */
function waitsOnNeighbours(vm: VirtualMachine): boolean {
  const conditions = vm.status?.conditions ?? [];
  const scheduled = conditions.find((c) => c.type === ConditionType.Scheduled);
  const ready = conditions.find((c) => c.type === ConditionType.Ready);
  return (scheduled !== undefined && scheduled.status !== 'True') || ready?.reason === Reason.DuplicateAddress;
}
