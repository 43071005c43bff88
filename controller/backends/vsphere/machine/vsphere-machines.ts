// VSphereMachine on vCenter, as the steps of the machine recipe (kit/machine/): the VM is
// found by its BIOS UUID (never by name) with its summary and marks in one read, cloned with
// that UUID and mark when absent (clone-task.ts), given its guest data before the first
// boot, resized, and powered as asked (off: VMware Tools asked to shut the guest down, the VM
// powered off hard only when it has no Tools or after the grace period, as an operator's "Shut
// Down Guest OS" first). Deleting powers it off and destroys it; a release
// (deletionPolicy Retain) only swaps `banlieue.owner` for `banlieue.released-from`.
import type { MachineAddress, PowerState } from '../../../../infra/api/machine-fields.js';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyResult, MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { machineBackend } from '../../kit/machine/machine-backend.js';
import { ShutdownRequests, shutdownNote } from '../../kit/machine/shutdown-grace.js';
import type { Found, MachineSteps, Owned, Pass, Step } from '../../kit/machine/steps.js';
import type { SessionPool } from '../../kit/session-pool.js';
import { ownNicAddresses } from '../../machine-addresses.js';
import type { Logger } from '../../../runtime/log.js';
import type { ManagedObjectReference, VirtualMachinePowerState, VmHardware, VmSummary } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { isVsphereFault } from '../client/vsphere-fault.js';
import { OWNER_MARK_KEY, RELEASED_FROM_KEY } from './clone-spec.js';
import { CloneTargetCache } from './clone-target-cache.js';
import { readCloneTask, startClone } from './clone-task.js';
import { guestInfoExtraConfig } from './guest-info.js';
import type { GuestWatches } from './guest-watch.js';
import { isNoop, resizeOf, type Resize } from './resize.js';

type Request = MachineRequest<VSphereMachineSpec>;

/** A VM found in this pass: its moref and its summary as read with its marks. */
interface Vm {
  readonly ref: ManagedObjectReference;
  readonly summary: VmSummary;
}

/**
 * What the pass saw: the summary, and the hardware read at most once per pass (guest data and resize both need it; an extraConfig
 * write does not change it); `shutdownNote` says how long a guest asked to shut down still has.
 */
interface Seen {
  readonly power: PowerState;
  readonly summary: VmSummary;
  readonly hardware: () => Promise<VmHardware>;
  readonly shutdownNote?: string;
}

/** `watches`, when given, wake a machine whose VM changes (guest-watch.ts); without, machines poll. */
export function vsphereMachines(sessions: SessionPool<VsphereClient>, watches?: GuestWatches): MachineBackend<VSphereMachineSpec> {
  const cloneTargets = new CloneTargetCache();
  const shutdowns = new ShutdownRequests();
  return machineBackend(sessions.use, (client) => vsphereSteps(client, cloneTargets, shutdowns, watches));
}

function vsphereSteps(
  client: VsphereClient,
  cloneTargets: CloneTargetCache,
  shutdowns: ShutdownRequests,
  watches: GuestWatches | undefined,
): MachineSteps<VSphereMachineSpec, Vm, Seen> {
  return {
    readTask: (request, taskRef) => readCloneTask(client, request, taskRef),
    find: (request, look) => find(client, request.uuid, look.hint),
    create: (request, options) => startClone(client, cloneTargets, request, options),
    observe: (vm, pass) => Promise.resolve(observe(client, vm, pass.request)),
    writeGuestData: (vm, seen, pass) => writeGuestInfo(client, vm, seen, pass.request),
    resize: (vm, seen, pass) => convergeHardware(client, vm, seen, pass.request.spec),
    power: (vm, seen, pass) => convergePower(client, shutdowns, vm, seen, pass),
    report: async (vm, seen, pass) => {
      const addresses = addressesOf(seen.summary);
      const watched = await watchGuest(client, watches, vm, pass.request.uuid, seen.power === 'PoweredOn' && addresses.length === 0);
      return {
        ref: vm.ref.value,
        powerState: seen.power,
        addresses,
        statusFields: { vmRef: vm.ref.value, biosUuid: pass.request.uuid },
        ...(seen.shutdownNote ? { pending: seen.shutdownNote } : {}),
        ...(watched ? { watched } : {}),
      };
    },
    destroy: (vm, request, { log }) => {
      watches?.unfollow(client, request.uuid);
      return destroy(client, vm, request.uuid, log);
    },
    unmark: async (vm, releasedFrom) => {
      // An empty value removes a key (vm-specs.ts).
      await client.vms.reconfigure(vm.ref, { extraConfig: { [OWNER_MARK_KEY]: '', [RELEASED_FROM_KEY]: releasedFrom } });
    },
    forget: (request) => {
      shutdowns.forget(request.uuid);
      watches?.unfollow(client, request.uuid);
    },
  };
}

/** A running VM whose guest has no address yet is watched until it has one (guest-watch.ts); true while it is. */
async function watchGuest(client: VsphereClient, watches: GuestWatches | undefined, vm: Owned<Vm>, uuid: string, waitsForGuest: boolean): Promise<boolean> {
  if (!watches) return false;
  if (waitsForGuest) return watches.follow(client, vm.ref, uuid);
  watches.unfollow(client, uuid);
  return false;
}

/** The VM with `uuid` (`hint`, a clone's result, read first), its summary and marks in one read; undefined when none has it. */
async function find(client: VsphereClient, uuid: string, hint: string | undefined): Promise<Found<Vm> | undefined> {
  if (hint !== undefined) {
    const hinted = await read(client, { type: 'VirtualMachine', value: hint });
    if (hinted?.vm?.summary.uuid?.toLowerCase() === uuid.toLowerCase()) return hinted;
  }
  const ref = await client.search.findVmByBiosUuid(uuid);
  return ref && read(client, ref);
}

/** The VM's summary and marks; undefined when it is gone (the UUID search may still name a VM just destroyed). */
async function read(client: VsphereClient, ref: ManagedObjectReference): Promise<Found<Vm> | undefined> {
  try {
    const { summary, extraConfig } = await client.vms.summaryWithExtraConfig(ref, [OWNER_MARK_KEY, RELEASED_FROM_KEY]);
    return { ref: ref.value, vm: { ref, summary }, marks: { owner: extraConfig.get(OWNER_MARK_KEY), releasedFrom: extraConfig.get(RELEASED_FROM_KEY) } };
  } catch (err) {
    if (isGone(err)) return undefined;
    throw err;
  }
}

function observe(client: VsphereClient, vm: Owned<Vm>, request: Request): Seen {
  if (vm.summary.template) throw new BackendError(BackendErrorKind.Rejected, `UUID ${request.uuid} belongs to template ${vm.summary.name}, not to a VM`);
  let hardwareRead: Promise<VmHardware> | undefined;
  return { power: POWER_STATE[vm.summary.powerState], summary: vm.summary, hardware: () => (hardwareRead ??= client.vms.hardware(vm.ref)) };
}

/** User-data and metadata, with the NICs' MACs as vCenter assigned them at clone time. */
async function writeGuestInfo(client: VsphereClient, vm: Owned<Vm>, seen: Seen, request: Request): Promise<Step<Seen>> {
  const cards = [...(await seen.hardware()).cards].sort((a, b) => a.key - b.key);
  const extraConfig = guestInfoExtraConfig({
    hostname: request.name,
    instanceId: request.uuid,
    providerID: request.providerID,
    userData: request.userData,
    nics: (request.spec.network ?? []).map((nic, i) => ({ name: nic.name, macAddress: nic.macAddress ?? cards[i]?.macAddress, ipam: nic.ipam })),
  });
  await client.vms.reconfigure(vm.ref, { extraConfig });
  return { state: 'Done', seen, actions: ['GuestDataWritten'] };
}

/**
 * Applies CPU, memory and disk growth; what cannot be applied now is returned as
 * pending. A running VM takes CPU/memory only where hot-add is enabled (the
 * template's setting); otherwise the change waits for the VM to be off.
 */
async function convergeHardware(client: VsphereClient, vm: Owned<Vm>, seen: Seen, spec: VSphereMachineSpec): Promise<Step<Seen>> {
  const resize = resizeOf(spec, await seen.hardware());
  const notes = resize.unattachedDisks.length > 0 ? [`disks added after provisioning are not attached: ${resize.unattachedDisks.join(', ')}`] : [];
  const actions: MachineAction[] = [];
  if (!isNoop(resize)) {
    try {
      await client.vms.reconfigure(vm.ref, { ...resize.cpuMemory, ...resize.disks });
      actions.push('Reconfigured');
    } catch (err) {
      const cpuMemory = Object.keys(resize.cpuMemory).length > 0;
      if (!(seen.power !== 'PoweredOff' && cpuMemory && isVsphereFault(err))) throw err;
      // Refused while running (no hot-add, or a decrease): grow the disks now, the rest at the next power-off.
      if (resize.disks.diskGrows) {
        await client.vms.reconfigure(vm.ref, resize.disks);
        actions.push('Reconfigured');
      }
      notes.push(`CPU/memory change (${describe(resize.cpuMemory)}) applies once the VM is powered off: ${err.faultType}`);
    }
  }
  return { state: 'Done', seen, actions, ...(notes.length > 0 ? { pending: notes.join('; ') } : {}) };
}

function describe(change: Resize['cpuMemory']): string {
  return [change.numCPUs !== undefined ? `${change.numCPUs} CPUs` : '', change.memoryMB !== undefined ? `${change.memoryMB} MiB` : '']
    .filter(Boolean)
    .join(', ');
}

/**
 * The power operations that take the VM to `desired`, then the summary read again. Off is the
 * guest's own shutdown first (powerOffStep): the guest was asked on an earlier pass and is
 * looked at again on later ones; the VM is powered off hard once the grace period is over.
 */
async function convergePower(
  client: VsphereClient,
  shutdowns: ShutdownRequests,
  vm: Owned<Vm>,
  seen: Seen,
  pass: Pass<VSphereMachineSpec>,
): Promise<Step<Seen>> {
  const { desired } = pass;
  const { uuid } = pass.request;
  shutdowns.settle(uuid, desired);
  const current = seen.summary.powerState;
  const actions: MachineAction[] = [];
  const on = async (): Promise<void> => {
    if (await tolerateRace(client.vms.powerOn(vm.ref))) actions.push('PoweredOn');
  };
  let asked = false;
  if (desired === 'PoweredOn' && current !== 'poweredOn') await on();
  if (desired === 'PoweredOff' && current !== 'poweredOff') {
    const step = await powerOffStep(client, shutdowns, vm, uuid, current);
    if (step === 'asked') pass.options.log.info({ vm: vm.ref.value }, 'Asked the guest to shut down');
    if (step === 'poweredOff') actions.push('PoweredOff');
    asked = step === 'asked';
  }
  if (desired === 'Suspended' && current !== 'suspended') {
    // Only a running VM suspends.
    if (current === 'poweredOff') await on();
    if (await tolerateRace(client.vms.suspend(vm.ref))) actions.push('Suspended');
  }
  const since = shutdowns.sinceOf(uuid);
  if (actions.length === 0 && !asked && since === undefined) return { state: 'Done', seen };
  const summary = await client.vms.summary(vm.ref);
  const now = { ...seen, summary, power: POWER_STATE[summary.powerState] };
  if (since === undefined) return { state: 'Done', seen: now, actions };
  if (summary.powerState === 'poweredOff') {
    // The guest shut down: the request is over.
    shutdowns.forget(uuid);
    return { state: 'Done', seen: now, actions: [...actions, 'PoweredOff'] };
  }
  return { state: 'Done', seen: { ...now, shutdownNote: shutdownNote(since, Date.now(), 'the VM is powered off') }, actions };
}

/**
 * One step of powering a VM off: Tools asked to shut the guest down (`asked`), nothing while it
 * has time left (`waiting`), or a hard power-off (`poweredOff`: the grace period is over, the VM
 * is suspended, or it has no running Tools to ask; `none`: someone else got there first).
 */
async function powerOffStep(
  client: VsphereClient,
  shutdowns: ShutdownRequests,
  vm: Owned<Vm>,
  uuid: string,
  current: VirtualMachinePowerState,
): Promise<'asked' | 'waiting' | 'poweredOff' | 'none'> {
  const hard = async (): Promise<'poweredOff' | 'none'> => {
    shutdowns.forget(uuid);
    return (await tolerateRace(client.vms.powerOff(vm.ref))) ? 'poweredOff' : 'none';
  };
  if (current !== 'poweredOn') return hard();
  if (shutdowns.sinceOf(uuid) !== undefined) return shutdowns.isOver(uuid, Date.now()) ? hard() : 'waiting';
  try {
    await client.vms.shutdownGuest(vm.ref);
  } catch (err) {
    // No Tools running in the guest (vCenter refuses ShutdownGuest): nothing to ask, as an operator would then power it off.
    if (isVsphereFault(err, 'ToolsUnavailable')) return hard();
    if (isVsphereFault(err, 'InvalidPowerState')) return 'none';
    throw err;
  }
  shutdowns.asked(uuid, Date.now());
  return 'asked';
}

/** False when someone else changed the power state first (InvalidPowerState): the next read tells. */
async function tolerateRace(operation: Promise<void>): Promise<boolean> {
  try {
    await operation;
    return true;
  } catch (err) {
    if (isVsphereFault(err, 'InvalidPowerState')) return false;
    throw err;
  }
}

async function destroy(client: VsphereClient, vm: Owned<Vm>, uuid: string, log: Logger): Promise<DestroyResult> {
  try {
    if (vm.summary.powerState !== 'poweredOff') await tolerateRace(client.vms.powerOff(vm.ref));
    await client.vms.destroy(vm.ref);
    log.info({ vm: vm.ref.value, uuid }, 'Destroyed the VM');
    return { state: 'Gone', existed: true };
  } catch (err) {
    // A VM the UUID search named but vCenter no longer has (a destroy that finished as its pass was killed) is gone, not a failure to retry for ever.
    if (isGone(err)) return { state: 'Gone', existed: false };
    throw err;
  }
}

function isGone(err: unknown): boolean {
  return isBackendError(err, BackendErrorKind.NotFound) || isVsphereFault(err, 'ManagedObjectNotFound');
}

const POWER_STATE: Record<VirtualMachinePowerState, PowerState> = { poweredOn: 'PoweredOn', poweredOff: 'PoweredOff', suspended: 'Suspended' };

/** Guest-reported addresses, primary first: those of the NICs backed by the VM's devices (Tools gives the guest's own interfaces deviceConfigId -1). */
export function addressesOf(summary: VmSummary): MachineAddress[] {
  const ofVnics = summary.guestNics.filter((nic) => nic.deviceConfigId !== -1).flatMap((nic) => nic.ipAddresses);
  return ownNicAddresses(
    [summary.ipAddress, ...ofVnics],
    summary.guestNics.flatMap((nic) => nic.ipAddresses),
  );
}
