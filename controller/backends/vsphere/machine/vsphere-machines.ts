// VSphereMachine on vCenter: the VM is found by its BIOS UUID (never by name),
// cloned with that UUID when absent, given its guest data before the first
// boot, and powered as asked. The clone is started, not awaited: its task is
// returned (the provider keeps it in status.taskRef) and read again on later
// passes. A clone that lost a race with an earlier one (a crash between
// CloneVM_Task and the status write) fails with DuplicateName; the VM already
// there is adopted when its UUID is ours. A machine deleted with deletionPolicy
// Retain releases its VM instead of destroying it: only its mark changes.
import type { MachineAddress, PowerState } from '../../../../infra/api/common.js';
import { VSPHERE_MAX_VM_NAME_LENGTH, type VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { Connection, DestroyOptions, DestroyResult, EnsureOptions, EnsureResult, MachineAction, MachineBackend, MachineRequest, ReleaseResult } from '../../backend.js';
import { withSignal } from '../../cancellation.js';
import { ownNicAddresses } from '../../machine-addresses.js';
import { assertOwnedBy, ownerMark, releaseVm } from '../../ownership.js';
import type { ManagedObjectReference, VirtualMachinePowerState, VmHardware, VmSummary } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { settled } from '../client/tasks.js';
import { isVsphereFault } from '../client/vsphere-fault.js';
import { toMoRef } from '../client/wire-values.js';
import type { VsphereSessionPool } from '../session-pool.js';
import { buildCloneSpec, OWNER_MARK_KEY, RELEASED_FROM_KEY } from './clone-spec.js';
import { CloneTargetCache } from './clone-target-cache.js';
import { guestInfoExtraConfig } from './guest-info.js';
import { isNoop, resizeOf, type Resize } from './resize.js';

type Request = MachineRequest<VSphereMachineSpec>;

/**
 * vCenter's longest VM name. A longer one fails CloneVM_Task only once the task runs, so it is refused before any clone:
 * admission refuses it on a VSphereMachine, but not on a VirtualMachine, which names no backend.
 */
export const MAX_VM_NAME_LENGTH = VSPHERE_MAX_VM_NAME_LENGTH;

export function vsphereMachines(sessions: VsphereSessionPool): MachineBackend<VSphereMachineSpec> {
  const cloneTargets = new CloneTargetCache();
  return {
    ensure: (connection: Connection, request: Request, options: EnsureOptions) =>
      withSignal(options.signal, () => sessions.use(connection, (client) => ensure(client, cloneTargets, request, options))),
    destroy: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () => sessions.use(connection, (client) => destroy(client, request, options))),
    release: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () => sessions.use(connection, (client) => release(client, request, options))),
  };
}

async function ensure(client: VsphereClient, cloneTargets: CloneTargetCache, request: Request, options: EnsureOptions): Promise<EnsureResult> {
  const actions: MachineAction[] = [];
  // Our clone first: while it runs, one task read is the whole pass.
  let clone = await pickUpClone(client, request);
  if (clone.state === 'running') return { state: 'InProgress', taskRef: clone.taskRef, message: clone.message, actions: [] };
  let vm = clone.state === 'done' ? clone.vm : await client.search.findVmByBiosUuid(request.uuid);
  if (!vm) {
    if (!options.mayCreate) return { state: 'Absent' };
    const task = await startClone(client, cloneTargets, request, options);
    // One look, no wait: a quick clone (a linked clone) may be over already, and this pass goes on with its VM.
    clone = await pickUpClone(client, { ...request, taskRef: task.value });
    if (clone.state !== 'done') return { state: 'InProgress', taskRef: task.value, message: `CloneVM_Task ${task.value} started`, actions: ['CreateStarted'] };
    vm = clone.vm;
  }
  if (clone.state === 'done') {
    actions.push(clone.adopted ? 'Adopted' : 'Created');
  } else if (options.firstBoot) {
    // Not made by a task of ours: only with our mark (a providerID can be copied).
    await assertOwned(client, vm, request);
    actions.push('Adopted');
  }
  const found = vm;
  // Devices, CPUs and memory, read at most once per pass (guest data and resize both need them; an extraConfig write does not change them).
  let hardwareRead: Promise<VmHardware> | undefined;
  const hardware = (): Promise<VmHardware> => (hardwareRead ??= client.vms.hardware(found));
  let summary = await client.vms.summary(vm);
  if (summary.template) throw new BackendError(BackendErrorKind.Rejected, `UUID ${request.uuid} belongs to template ${summary.name}, not to a VM`);
  if (options.firstBoot && summary.powerState === 'poweredOff') {
    await writeGuestInfo(client, vm, request, await hardware());
    actions.push('GuestDataWritten');
  }
  // A clone has its spec's shape; afterwards the spec may change (hardwareOverride).
  // Resized while off when possible: a running VM takes CPU/memory only with hot-add.
  const resize = async (state: VirtualMachinePowerState): Promise<string | undefined> =>
    actions.includes('Created') || !options.specChanged ? undefined : convergeHardware(client, found, request.spec, await hardware(), state, actions);
  const offBefore = summary.powerState === 'poweredOff';
  let pending = offBefore ? await resize(summary.powerState) : undefined;
  const powered = await convergePower(client, vm, summary.powerState, request.spec.desiredPowerState ?? 'PoweredOn');
  if (powered.length > 0) {
    actions.push(...powered);
    summary = await client.vms.summary(vm);
  }
  if (!offBefore) pending = await resize(summary.powerState);
  return {
    state: 'Present',
    observation: {
      ref: vm.value,
      powerState: POWER_STATE[summary.powerState],
      addresses: addressesOf(summary),
      actions,
      statusFields: { vmRef: vm.value, biosUuid: request.uuid },
      ...(pending ? { pending } : {}),
    },
  };
}

/**
 * Applies CPU, memory and disk growth; what cannot be applied now is returned
 * as a note. A running VM takes CPU/memory only where hot-add is enabled (the
 * template's setting); otherwise the change waits for the VM to be off.
 */
async function convergeHardware(
  client: VsphereClient,
  vm: ManagedObjectReference,
  spec: VSphereMachineSpec,
  current: VmHardware,
  powerState: VirtualMachinePowerState,
  actions: MachineAction[],
): Promise<string | undefined> {
  const resize = resizeOf(spec, current);
  const notes = resize.unattachedDisks.length > 0 ? [`disks added after provisioning are not attached: ${resize.unattachedDisks.join(', ')}`] : [];
  if (!isNoop(resize)) {
    try {
      await client.vms.reconfigure(vm, { ...resize.cpuMemory, ...resize.disks });
      actions.push('Reconfigured');
    } catch (err) {
      const cpuMemory = Object.keys(resize.cpuMemory).length > 0;
      if (!(powerState !== 'poweredOff' && cpuMemory && isVsphereFault(err))) throw err;
      // Refused while running (no hot-add, or a decrease): grow the disks now, the rest at the next power-off.
      if (resize.disks.diskGrows) {
        await client.vms.reconfigure(vm, resize.disks);
        actions.push('Reconfigured');
      }
      notes.push(`CPU/memory change (${describe(resize.cpuMemory)}) applies once the VM is powered off: ${err.faultType}`);
    }
  }
  return notes.length > 0 ? notes.join('; ') : undefined;
}

function describe(change: Resize['cpuMemory']): string {
  return [change.numCPUs !== undefined ? `${change.numCPUs} CPUs` : '', change.memoryMB !== undefined ? `${change.memoryMB} MiB` : ''].filter(Boolean).join(', ');
}

type CloneState =
  /** No clone of ours is known (none started, or vCenter forgot the task). */
  | { readonly state: 'none' }
  | { readonly state: 'running'; readonly taskRef: string; readonly message: string }
  | { readonly state: 'done'; readonly vm: ManagedObjectReference; readonly adopted: boolean };

/** The clone an earlier pass started (request.taskRef), as vCenter reports it now. */
async function pickUpClone(client: VsphereClient, request: Request): Promise<CloneState> {
  if (!request.taskRef) return { state: 'none' };
  const task = { type: 'Task', value: request.taskRef };
  let info;
  try {
    info = await client.tasks.info(task);
  } catch (err) {
    // vCenter keeps finished tasks for a while only: a forgotten task with no VM behind it is no clone.
    if (isBackendError(err, BackendErrorKind.NotFound) || isVsphereFault(err, 'ManagedObjectNotFound')) return { state: 'none' };
    throw err;
  }
  try {
    // The info just read tells the end too: no second read of the task.
    const outcome = settled(info);
    if (!outcome) return { state: 'running', taskRef: request.taskRef, message: `${info.name} ${request.taskRef} is ${info.state}` };
    const { result } = outcome;
    const vm = result === undefined ? await client.search.findVmByBiosUuid(request.uuid) : toMoRef(result);
    if (!vm) throw new BackendError(BackendErrorKind.TaskFailed, `${info.name} ${request.taskRef} succeeded but no VM has UUID ${request.uuid}`);
    return { state: 'done', vm, adopted: false };
  } catch (err) {
    if (!isVsphereFault(err, 'DuplicateName')) throw err;
    // An earlier clone (before a crash or restart) got there first: ours if it has our UUID and mark.
    const existing = await client.search.findVmByBiosUuid(request.uuid);
    if (existing) {
      await assertOwned(client, existing, request);
      return { state: 'done', vm: existing, adopted: true };
    }
    throw new BackendError(BackendErrorKind.Rejected, `a VM named ${request.name} already exists in the target folder and is not this machine's (its BIOS UUID is not ${request.uuid})`);
  }
}

/** Starts CloneVM_Task with the machine's UUID; its task is the provider's to remember. */
async function startClone(client: VsphereClient, cloneTargets: CloneTargetCache, request: Request, options: EnsureOptions): Promise<ManagedObjectReference> {
  // A name vCenter will refuse: no real task, started again at every retry, just to fail (issue 15).
  if (request.name.length > MAX_VM_NAME_LENGTH) {
    throw new BackendError(BackendErrorKind.Rejected, `the VM name ${request.name} has ${request.name.length} characters; vCenter takes at most ${MAX_VM_NAME_LENGTH} characters: give the machine a shorter name`);
  }
  const { targets, templateHardware } = await cloneTargets.resolve(client, request.spec, request.raw);
  const spec = buildCloneSpec(request.spec, request.uuid, ownerMark(request.owner), targets, templateHardware);
  let task: ManagedObjectReference;
  try {
    task = await client.vms.startClone(targets.template, targets.folder, request.name, spec);
  } catch (err) {
    // Maybe something it names went away: the next pass looks the targets up afresh.
    cloneTargets.forget(client, request.spec, request.raw);
    throw err;
  }
  options.log.info({ task: task.value, uuid: request.uuid, datacenter: targets.datacenter.name, cluster: targets.cluster.name }, 'CloneVM_Task started');
  return task;
}

/** Throws NotOwned unless the VM's extraConfig carries this machine's mark (one read of extraConfig). */
async function assertOwned(client: VsphereClient, vm: ManagedObjectReference, request: Request): Promise<void> {
  assertOwnedBy(request.owner, request.uuid, (await client.vms.extraConfig(vm)).get(OWNER_MARK_KEY));
}

/** User-data and metadata, with the NICs' MACs as vCenter assigned them at clone time. */
async function writeGuestInfo(client: VsphereClient, vm: ManagedObjectReference, request: Request, hardware: VmHardware): Promise<void> {
  const cards = [...hardware.cards].sort((a, b) => a.key - b.key);
  const extraConfig = guestInfoExtraConfig({
    hostname: request.name,
    instanceId: request.uuid,
    providerID: request.providerID,
    userData: request.userData,
    nics: (request.spec.network ?? []).map((nic, i) => ({ name: nic.name, macAddress: nic.macAddress ?? cards[i]?.macAddress, ipam: nic.ipam })),
  });
  await client.vms.reconfigure(vm, { extraConfig });
}

/** The power operations that take the VM from `current` to `desired`; a hard power-off, as upstream. */
async function convergePower(client: VsphereClient, vm: ManagedObjectReference, current: VirtualMachinePowerState, desired: PowerState): Promise<MachineAction[]> {
  const actions: MachineAction[] = [];
  const on = async (): Promise<void> => {
    if (await tolerateRace(client.vms.powerOn(vm))) actions.push('PoweredOn');
  };
  if (desired === 'PoweredOn' && current !== 'poweredOn') await on();
  if (desired === 'PoweredOff' && current !== 'poweredOff') {
    if (await tolerateRace(client.vms.powerOff(vm))) actions.push('PoweredOff');
  }
  if (desired === 'Suspended' && current !== 'suspended') {
    // Only a running VM suspends.
    if (current === 'poweredOff') await on();
    if (await tolerateRace(client.vms.suspend(vm))) actions.push('Suspended');
  }
  return actions;
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

/**
 * The machine's VM for a deletion or a release, or undefined. A clone still running is waited
 * out: deleting (or letting go) now would leave the VM it is about to create to nobody.
 */
async function findToLetGo(client: VsphereClient, request: Request, ending: string): Promise<ManagedObjectReference | { readonly waiting: string } | undefined> {
  const vm = await client.search.findVmByBiosUuid(request.uuid);
  if (vm || !request.taskRef) return vm;
  const clone = await pickUpClone(client, request).catch((err: unknown) => {
    // A clone that failed (or lost its name to a VM not ours) left nothing of this machine's.
    if (isBackendError(err, BackendErrorKind.TaskFailed) || isBackendError(err, BackendErrorKind.Rejected) || isVsphereFault(err)) return { state: 'none' } as const;
    throw err;
  });
  if (clone.state === 'running') return { waiting: `waiting for ${clone.message} to end before ${ending} its VM` };
  return clone.state === 'done' ? clone.vm : undefined;
}

/** Gone meanwhile (a VM the UUID search still names but vCenter no longer has): what a deletion or release wants. */
function isGone(err: unknown): boolean {
  return isBackendError(err, BackendErrorKind.NotFound) || isVsphereFault(err, 'ManagedObjectNotFound');
}

async function destroy(client: VsphereClient, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  const vm = await findToLetGo(client, request, 'deleting');
  if (vm && 'waiting' in vm) return { state: 'InProgress', message: vm.waiting };
  if (!vm) return { state: 'Gone', existed: false };
  try {
    // Inside the try: a VM the UUID search still names but vCenter no longer has (a destroy that
    // finished as its pass was killed) is gone, not a failure to retry for ever.
    await assertOwned(client, vm, request);
    const { powerState } = await client.vms.summary(vm);
    if (powerState !== 'poweredOff') await tolerateRace(client.vms.powerOff(vm));
    await client.vms.destroy(vm);
    log.info({ vm: vm.value, uuid: request.uuid }, 'Destroyed the VM');
    return { state: 'Gone', existed: true };
  } catch (err) {
    if (isGone(err)) return { state: 'Gone', existed: false };
    throw err;
  }
}

/**
 * Lets the VM go (deletionPolicy Retain): its `banlieue.owner` extraConfig removed in one
 * ReconfigVM_Task and `banlieue.released-from` written in its place; power and disks untouched.
 */
async function release(client: VsphereClient, request: Request, { log }: DestroyOptions): Promise<ReleaseResult> {
  const vm = await findToLetGo(client, request, 'releasing');
  if (vm && 'waiting' in vm) return { state: 'InProgress', message: vm.waiting };
  if (!vm) return { state: 'Absent' };
  try {
    const extraConfig = await client.vms.extraConfig(vm);
    const marks = { owner: extraConfig.get(OWNER_MARK_KEY), releasedFrom: extraConfig.get(RELEASED_FROM_KEY) };
    // An empty value removes a key (vm-specs.ts).
    const unmark = async (releasedFrom: string): Promise<void> => client.vms.reconfigure(vm, { extraConfig: { [OWNER_MARK_KEY]: '', [RELEASED_FROM_KEY]: releasedFrom } });
    return await releaseVm(request, { ref: vm.value, marks, unmark }, log);
  } catch (err) {
    if (isGone(err)) return { state: 'Absent' };
    throw err;
  }
}

const POWER_STATE: Record<VirtualMachinePowerState, PowerState> = { poweredOn: 'PoweredOn', poweredOff: 'PoweredOff', suspended: 'Suspended' };

/** Guest-reported addresses, primary first: those of the NICs backed by the VM's devices (Tools gives the guest's own interfaces deviceConfigId -1). */
export function addressesOf(summary: VmSummary): MachineAddress[] {
  const ofVnics = summary.guestNics.filter((nic) => nic.deviceConfigId !== -1).flatMap((nic) => nic.ipAddresses);
  return ownNicAddresses([summary.ipAddress, ...ofVnics], summary.guestNics.flatMap((nic) => nic.ipAddresses));
}
