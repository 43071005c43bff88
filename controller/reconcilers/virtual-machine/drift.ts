// A running VM whose placement is impossible (scheduler/running-placement.ts):
// what its migrationPolicy allows. There is no live migration: moving means
// deleting its machine, which destroys the VM and its disks, and cloning a
// new one from its image elsewhere. So a move is said before it is done — a
// PlacementValid=False Recreating condition and a Warning Event, naming the
// old and the new placement — and done only once the condition is on the VM,
// never for more VMs of a namespace per minute than the controller allows
// (a Provider outage must not turn into a mass re-clone). docs/adr/0022.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import { Annotation } from '../../../infra/api/well-known.js';
import type { ImpossibleReason } from '../../scheduler/running-placement.js';
import type { ConditionInput } from '../../runtime/conditions.js';

/** How many recreates the VM's namespace may still start now. */
export interface RecreateBudget {
  /** Recreates allowed per namespace per minute. */
  readonly limit: number;
  readonly available: boolean;
  /** When one is available again, if none is now. */
  readonly nextAt?: Date;
}

export interface MoveInput {
  readonly vm: VirtualMachine;
  readonly impossible: { readonly reason: ImpossibleReason; readonly message: string };
  /** `provider/failure-domain` it runs on. */
  readonly from: string;
  /** Where the scheduler would put it now, or why nowhere. */
  readonly to: { readonly ok: true; readonly where: string } | { readonly ok: false; readonly message: string };
  /** `Kind name` of the machine it runs on. */
  readonly machine: string;
  readonly budget?: RecreateBudget;
  readonly now: Date;
}

export interface MoveDecision {
  /** Always False: the VM does not run where its spec allows. */
  readonly placementValid: ConditionInput;
  /** A Warning Event, when the condition says something new. */
  readonly event?: { readonly reason: Reason; readonly message: string };
  /** Delete every machine the VM controls now (the recreate was announced on an earlier pass). */
  readonly deleteMachines: boolean;
  /** This pass announces a recreate: it takes one of the namespace's recreates. */
  readonly takesRecreate: boolean;
  readonly requeueAfterMs?: number;
}

/** Looked at again this soon after a recreate was announced: the announcement's own status event usually comes first. */
const ANNOUNCED_MS = 2_000;

export function decideMove(input: MoveInput): MoveDecision {
  const { vm, impossible, from, to } = input;
  const why = impossible.message;
  if (!to.ok) return stay(vm, impossible.reason, `${why}; it stays on ${from}: there is nowhere to move it (${to.message})`);
  const policy = vm.spec.migrationPolicy ?? 'manual';
  if (policy === 'never') return stay(vm, impossible.reason, `${why}; migrationPolicy never keeps it on ${from}`);
  const requested = vm.metadata.annotations?.[Annotation.migrate] === 'true';
  if (policy === 'manual' && !requested) {
    return stay(
      vm,
      impossible.reason,
      `${why}; annotate ${Annotation.migrate}=true to recreate it on ${to.where} (its VM and disks are deleted and a new one is cloned from its image)`,
    );
  }
  const how = policy === 'manual' ? `migrationPolicy manual, ${Annotation.migrate}=true` : 'migrationPolicy automatic';
  const announcement = `${why}: recreating it on ${to.where}: ${input.machine} on ${from} is deleted with its VM and disks, and a new VM is cloned from its image (${how})`;
  const current = placementValidOf(vm);
  if (current?.reason === Reason.Recreating && current.message === announcement) {
    return { placementValid: notValid(Reason.Recreating, announcement), deleteMachines: true, takesRecreate: false };
  }
  const { budget } = input;
  if (budget && !budget.available) {
    const at = budget.nextAt ?? input.now;
    const message = `${why}; it would be recreated on ${to.where}, but ${budget.limit} VirtualMachines of namespace ${vm.metadata.namespace ?? ''} were recreated in the last minute: tried again at ${at.toISOString()}`;
    return { ...stay(vm, Reason.RecreateDeferred, message), requeueAfterMs: Math.max(at.getTime() - input.now.getTime(), 0) + 1 };
  }
  return {
    placementValid: notValid(Reason.Recreating, announcement),
    event: { reason: Reason.Recreating, message: announcement },
    deleteMachines: false,
    takesRecreate: true,
    requeueAfterMs: ANNOUNCED_MS,
  };
}

/** The VM stays where it is, PlacementValid=False saying why; a Warning Event when that reason begins. */
function stay(vm: VirtualMachine, reason: Reason, message: string): MoveDecision {
  const begins = placementValidOf(vm)?.reason !== reason;
  return { placementValid: notValid(reason, message), ...(begins ? { event: { reason, message } } : {}), deleteMachines: false, takesRecreate: false };
}

function placementValidOf(vm: VirtualMachine): { readonly reason: string; readonly message: string } | undefined {
  return vm.status?.conditions?.find((c) => c.type === ConditionType.PlacementValid && c.status === 'False');
}

function notValid(reason: Reason, message: string): ConditionInput {
  return { type: ConditionType.PlacementValid, status: 'False', reason, message };
}
