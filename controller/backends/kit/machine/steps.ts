// The small steps a backend gives the machine recipe (converge.ts, let-go.ts): read the task
// an earlier pass started, find the VM by UUID with its marks, start its creation, then
// observe, write guest data, resize, power, report, destroy, unmark. The recipe owns their
// order and, between finding a VM and any step that may change it, the ownership check:
// every such step takes an `Owned<Vm>`, which only the recipe makes, once the marks the VM
// carries are this machine's (ownership.ts). `Vm` is the backend's handle of a VM found in
// this pass (a moref and its summary, a node/VMID and its config, a domain, a state
// directory and its record); `Seen` what the pass saw of it, carried from step to step.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import type { Reason } from '../../../../infra/api/conditions.js';
import type { BackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, EnsureOptions, MachineAction, MachineObservation, MachineRequest } from '../../backend.js';
import type { VmMarks } from '../../ownership.js';

declare const owned: unique symbol;

/** A VM whose marks the recipe found to be this machine's: the only kind a step may change. */
export type Owned<Vm> = Vm & { readonly [owned]: true };

/** A VM found by the machine's UUID, as the backend sees it in this pass. */
export interface Found<Vm> {
  /** Its backend reference: moref `vm-42`, `pve1/101`, a domain name, a state directory. */
  readonly ref: string;
  /** The marks it carries, read in the same look. */
  readonly marks: VmMarks;
  /** The backend's handle of it; absent for a VM it sees but has no handle for (a VMM serving a directory without a machine record): such a VM carries no mark. */
  readonly vm: Vm | undefined;
}

/** A task an earlier pass started (status.taskRef), as the backend reports it now. */
export type TaskReading =
  /** No task is known: none remembered, or the backend forgot it. */
  | { readonly state: 'None' }
  /**
   * `task` names it for messages: `CloneVM_Task task-12`, `clone task of VM 101 on pve1`;
   * `progress`, how far it is in percent, when the backend tells.
   */
  | { readonly state: 'Running'; readonly task: string; readonly progress?: number }
  | EndedTask;

/** A task that ended well, or a VM made within the pass (a definition, a record): what it says is a hint, never proof of ownership. */
export interface EndedTask {
  readonly state: 'Ended';
  readonly task: string;
  /** The reference of the VM it made or changed, when the backend can tell: looked at first, taken only with the machine's UUID and marks. */
  readonly target?: string;
  /** It made the VM: afterwards a VM must carry the machine's UUID. */
  readonly creates: boolean;
  /** What it did, as Events (Created, Adopted, PoweredOn…), said only when the VM found is the one it worked on. */
  readonly actions: readonly MachineAction[];
  /** What to throw when no VM carries the UUID after this creating task. @default TaskFailed: "<task> succeeded but no VM carries UUID <uuid>" */
  readonly missing?: BackendError;
}

/** Where `find` looks. */
export interface Look {
  /** `target` of the task that just ended: where to look first. */
  readonly hint?: string;
  /**
   * The machine was provisioned: only the VM with its identity is its VM, never one that names it
   * otherwise (Proxmox: a copy that names it in its description). False in a deletion or release,
   * where a creation not yet configured must be found too.
   */
  readonly provisioned: boolean;
}

/**
 * A VM this pass made from a definition it wrote, UUID and mark included (a libvirt domain
 * defined from its XML): what it made is known without reading it back. The recipe checks its
 * marks like any other VM's.
 */
export interface Made<Vm> extends EndedTask {
  readonly made: Found<Vm>;
}

/** What starting a creation did: a task started (remembered in status.taskRef), a VM there already, to be found again by UUID, or one made within the pass. */
export type Creation<Vm = never> = { readonly state: 'Started'; readonly taskRef: string; readonly message: string } | EndedTask | Made<Vm>;

/** What a pass saw of an owned VM: at least its power state, which orders the steps. */
export interface Observed {
  readonly power: PowerState;
}

/** One pass as the converge steps read it. */
export interface Pass<Spec> {
  readonly request: MachineRequest<Spec>;
  readonly options: EnsureOptions;
  /** spec.desiredPowerState, defaulted. */
  readonly desired: PowerState;
}

/** What a converge step did: it ran to its end (what it did, what waits), or started a backend task the pass ends on. */
export type Step<Seen> =
  | { readonly state: 'Done'; readonly seen: Seen; readonly actions?: readonly MachineAction[]; readonly pending?: string }
  | { readonly state: 'Started'; readonly taskRef: string; readonly message: string; readonly actions?: readonly MachineAction[]; readonly reason?: Reason };

/** A converge step: the owned VM, what the pass saw of it, the pass. */
export type ConvergeStep<Spec, Vm, Seen> = (vm: Owned<Vm>, seen: Seen, pass: Pass<Spec>) => Promise<Step<Seen>>;

/** The VM held by work the pass does not know (a lock of a task from before a restart, or someone's): the pass looks again later. */
export interface Busy {
  /** What status.taskRef says while no task of ours is remembered. */
  readonly taskRef: string;
  readonly message: string;
}

/** The observation of a converged VM, but the actions (the recipe collects them); `pending` comes after what the steps said waits. */
export type Report = Omit<MachineObservation, 'actions'>;

/** Finding the VM and starting its creation. */
export interface IdentitySteps<Spec, Vm> {
  /** Reads `taskRef`; throws TaskFailed when the task ended in error. Omitted by a backend whose passes start no task to pick up. */
  readonly readTask?: (request: MachineRequest<Spec>, taskRef: string) => Promise<TaskReading>;
  /** The VM with the machine's UUID and its marks, or undefined when none has it. */
  readonly find: (request: MachineRequest<Spec>, look: Look) => Promise<Found<Vm> | undefined>;
  /** Starts the VM's creation, with the UUID and mark; a long task is started, never awaited. */
  readonly create: (request: MachineRequest<Spec>, options: EnsureOptions) => Promise<Creation<Vm>>;
}

/** Converging an owned VM, in the order the recipe decides (decide.ts `planSteps`). */
export interface ConvergeSteps<Spec, Vm, Seen extends Observed> {
  /** A reason to touch nothing now, as found with the VM. */
  readonly busy?: (vm: Owned<Vm>) => Busy | undefined;
  /** Reads what the steps need; `Gone` when what makes the VM is gone and it may not be made again (reported Absent). */
  readonly observe: (vm: Owned<Vm>, pass: Pass<Spec>) => Promise<Seen | 'Gone'>;
  /** The guest's first-boot data, while it has not booted (firstBoot, powered off). */
  readonly writeGuestData?: ConvergeStep<Spec, Vm, Seen>;
  /** CPUs, memory, disks after a spec change. */
  readonly resize?: ConvergeStep<Spec, Vm, Seen>;
  /** One move toward `pass.desired`. */
  readonly power: ConvergeStep<Spec, Vm, Seen>;
  readonly report: (vm: Owned<Vm>, seen: Seen, pass: Pass<Spec>) => Promise<Report>;
}

/** Letting an owned VM go. */
export interface LetGoSteps<Spec, Vm> {
  /** Powers the VM off and deletes it with its disks; InProgress while a task of it runs. */
  readonly destroy: (vm: Owned<Vm>, request: MachineRequest<Spec>, options: DestroyOptions) => Promise<DestroyResult>;
  /** No VM has the UUID: removes what is left of the machine that only it names (volumes named by its UUID, a seed ISO). @default nothing: Gone, existed false */
  readonly destroyLeftovers?: (request: MachineRequest<Spec>, options: DestroyOptions) => Promise<DestroyResult>;
  /** Takes the mark away and leaves `releasedFrom` in its place; nothing else of the VM changes. */
  readonly unmark: (vm: Owned<Vm>, releasedFrom: string, request: MachineRequest<Spec>) => Promise<void>;
  /** Drops what the backend remembers of the machine once its VM was let go (where it was, a shutdown under way). */
  readonly forget?: (request: MachineRequest<Spec>) => void;
}

/** Everything a backend's machine kind is made of. */
export type MachineSteps<Spec, Vm, Seen extends Observed> = IdentitySteps<Spec, Vm> & ConvergeSteps<Spec, Vm, Seen> & LetGoSteps<Spec, Vm>;
