// The machine recipe's pure rules: what a task that ended says of the VM found, which steps
// a pass runs in which order, and what a pass says when a task runs or made nothing.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { EnsureOptions, MachineAction } from '../../backend.js';
import type { EndedTask } from './steps.js';

/** A converge step, by name. */
export type StepName = 'WriteGuestData' | 'Resize' | 'Power';

/**
 * The Events of a VM found by UUID and mark: those of the task that ended when it worked on
 * that VM (Created, a power change), else `Adopted` on a first boot (a VM not made by a task of
 * ours in this pass, such as an orphan of a crash). A task that worked on another VM says nothing.
 */
export function decideIdentityActions(ended: EndedTask | undefined, foundRef: string, firstBoot: boolean): readonly MachineAction[] {
  if (ended && (ended.target === undefined || ended.target === foundRef)) return ended.actions;
  return firstBoot ? ['Adopted'] : [];
}

/**
 * The steps after the VM is found and owned, in order. Guest data only before the first boot,
 * while the VM is off. A resize only after a spec change and not on the VM this pass created
 * (it was made to the spec): while the VM is off, before it is powered (a running VM takes CPUs
 * and memory only with hot-add), else after, when a power-off may have come first.
 */
export function planSteps(options: Pick<EnsureOptions, 'firstBoot' | 'specChanged'>, created: boolean, power: PowerState): readonly StepName[] {
  const off = power === 'PoweredOff';
  const guestData: StepName[] = options.firstBoot && off ? ['WriteGuestData'] : [];
  if (!options.specChanged || created) return [...guestData, 'Power'];
  return off ? [...guestData, 'Resize', 'Power'] : ['Power', 'Resize'];
}

/** What a creating task that ended leaves when no VM carries the UUID: the task's own word, else TaskFailed. */
export function missingAfter(task: EndedTask, uuid: string): BackendError {
  return task.missing ?? new BackendError(BackendErrorKind.TaskFailed, `${task.task} succeeded but no VM carries UUID ${uuid}`);
}

/** How far a task's progress is shown: in steps this wide, so that a machine's status is written at most 100/STEP times per task. */
export const TASK_PROGRESS_STEP = 10;

/** What a running task's condition message says: its name, and how far it is (rounded down to a step) when the backend tells. */
export function runningTask(task: string, progress: number | undefined): string {
  if (progress === undefined || !Number.isFinite(progress)) return `${task} is running`;
  const shown = Math.min(100, Math.max(0, Math.floor(progress / TASK_PROGRESS_STEP) * TASK_PROGRESS_STEP));
  return `${task} is running: ${shown}% done`;
}

/** Why a deletion or release waits: `ending` is "deleting" or "releasing". */
export function waitingFor(task: string, ending: string): string {
  return `waiting for ${task} to end before ${ending} the VM`;
}
