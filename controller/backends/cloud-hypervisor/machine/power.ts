// desiredPowerState on a machine's VMM, one short step per pass. On: the VMM
// started from the saved config, the VM created and booted (or resumed).
// Suspended: vm.pause. Off: the ACPI power button, then the pass ends; later
// passes look again until the guest is down or the grace period (from the
// press, kept in the state directory) is over, then vm.shutdown; a VM that is
// down has its VMM stopped (an off machine holds no process). Nothing waits on
// the guest inside a pass.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import { Reason } from '../../../../infra/api/conditions.js';
import type { MachineAction } from '../../backend.js';
import { isVmmApiError, VmmErrorCode } from '../client/vmm-error.js';
import type { VmInfo } from '../client/vmm-types.js';
import { startVmm, stopVmm, type VmmHandle } from '../vmm-process.js';
import type { HostRuntime } from './host-runtime.js';
import { clearPowerButton, readPowerButton, setPoweredOff, writePowerButton, type MachineRecord } from './machine-record.js';

/** A VMM as found this pass: none, or its handle and VM (undefined: no VM created in it). */
export type LiveVmm = { readonly handle: VmmHandle; readonly vm: VmInfo | undefined } | undefined;

export type PowerStep =
  | { readonly state: 'done'; readonly power: PowerState; readonly live: LiveVmm; readonly actions: readonly MachineAction[] }
  /** A power-off waits for the guest: `taskRef` marks it in status (Ready=False `reason`, Stopping) until a later pass sees it end. */
  | { readonly state: 'waiting'; readonly taskRef: string; readonly message: string; readonly reason: Reason };

/** The power state a VMM and its VM show. */
export function observedPower(live: LiveVmm): PowerState {
  const state = live?.vm?.state;
  return state === 'Running' ? 'PoweredOn' : state === 'Paused' ? 'Suspended' : 'PoweredOff';
}

/** One step towards `desired`; `live` as found at the start of the pass. */
export async function convergePower(host: HostRuntime, record: MachineRecord, live: LiveVmm, desired: PowerState): Promise<PowerStep> {
  if (desired === 'PoweredOff') return powerOff(host, live);
  const actions: MachineAction[] = [];
  let current = live;
  if (!current) {
    const handle = await startVmm(host.vmm, record.config.platform?.system_uuid ?? '');
    await setPoweredOff(handle.paths, false);
    current = { handle, vm: undefined };
  }
  const { client } = current.handle;
  await clearPowerButton(current.handle.paths);
  if (!current.vm) await client.createVm(record.config);
  let state = current.vm?.state ?? 'Created';
  if (state === 'Created' || state === 'Shutdown') {
    await tolerateState(client.bootVm());
    actions.push('PoweredOn');
    state = 'Running';
  }
  if (desired === 'PoweredOn' && state === 'Paused') {
    await tolerateState(client.resumeVm());
    actions.push('PoweredOn');
  }
  if (desired === 'Suspended' && state === 'Running') {
    await tolerateState(client.pauseVm());
    actions.push('Suspended');
  }
  const vm = actions.length > 0 ? await client.findVm() : current.vm;
  const after = { handle: current.handle, vm };
  return { state: 'done', power: observedPower(after), live: after, actions };
}

/** Power button, grace period, vm.shutdown, then the VMM stopped. */
async function powerOff(host: HostRuntime, live: LiveVmm): Promise<PowerStep> {
  if (!live) return { state: 'done', power: 'PoweredOff', live, actions: [] };
  const waiting = await bringGuestDown(host, live);
  if (waiting) return waiting;
  await stopVmm(host.vmm, live.handle);
  await setPoweredOff(live.handle.paths, true);
  await clearPowerButton(live.handle.paths);
  return { state: 'done', power: 'PoweredOff', live: undefined, actions: ['PoweredOff'] };
}

/**
 * One step of getting the guest down: the power button (its press recorded), a
 * look until the grace period ends, then vm.shutdown. Returns the waiting step,
 * or undefined once the VM is not running.
 */
export async function bringGuestDown(host: HostRuntime, live: NonNullable<LiveVmm>): Promise<Extract<PowerStep, { state: 'waiting' }> | undefined> {
  const { handle } = live;
  const state = live.vm?.state;
  if (state === 'Running') {
    const pressed = await readPowerButton(handle.paths);
    const now = host.now();
    if (!pressed) {
      await tolerateState(handle.client.powerButton());
      await writePowerButton(handle.paths, now);
      return waitingForGuest(host, now);
    }
    if (now.getTime() < deadlineOf(host, pressed).getTime()) return waitingForGuest(host, pressed);
    // The guest did not answer the button in time (or has no ACPI): stopped, as a pulled plug.
    await tolerateState(handle.client.shutdownVm());
  } else if (state === 'Paused') {
    // A paused guest cannot answer the button.
    await tolerateState(handle.client.shutdownVm());
  }
  return undefined;
}

/** The power-off marker in status.taskRef: `vm.power-button@<when pressed>`. */
export function powerButtonTaskRef(pressed: Date): string {
  return `vm.power-button@${pressed.toISOString()}`;
}

function deadlineOf(host: HostRuntime, pressed: Date): Date {
  return new Date(pressed.getTime() + host.config.powerOffGraceSeconds * 1000);
}

function waitingForGuest(host: HostRuntime, pressed: Date): Extract<PowerStep, { state: 'waiting' }> {
  const deadline = deadlineOf(host, pressed).toISOString();
  return {
    state: 'waiting',
    taskRef: powerButtonTaskRef(pressed),
    reason: Reason.Stopping,
    message: `ACPI power button pressed at ${pressed.toISOString()}; the guest has until ${deadline} to power off, then the VM is stopped`,
  };
}

/** A call refused because the VM is already where it was sent (a guest or operator got there first): the next read tells. */
async function tolerateState(call: Promise<void>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (
      isVmmApiError(error, VmmErrorCode.VmNotRunning) ||
      isVmmApiError(error, VmmErrorCode.InvalidStateTransition) ||
      isVmmApiError(error, VmmErrorCode.VmAlreadyCreated)
    )
      return;
    throw error;
  }
}
