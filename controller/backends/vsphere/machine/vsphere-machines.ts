// VSphereMachine on vCenter: the VM is found by its BIOS UUID (never by name),
// cloned with that UUID when absent, given its guest data before the first
// boot, and powered as asked. A clone that lost a race with an earlier one
// (a crash between CloneVM_Task and the next pass) fails with DuplicateName;
// the VM already there is adopted when its UUID is ours.
import type { MachineAddress, PowerState } from '../../../../infra/api/common.js';
import type { VSphereMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { Logger } from '../../../runtime/log.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { Connection, EnsureOptions, MachineAction, MachineBackend, MachineObservation, MachineRequest } from '../../backend.js';
import type { ManagedObjectReference, VirtualMachinePowerState, VmHardware, VmSummary } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { isVsphereFault } from '../client/vsphere-fault.js';
import { toMoRef } from '../client/wire-values.js';
import type { VsphereSessionPool } from '../session-pool.js';
import { buildCloneSpec } from './clone-spec.js';
import { resolveCloneTargets } from './clone-targets.js';
import { guestInfoExtraConfig } from './guest-info.js';
import { isNoop, resizeOf, type Resize } from './resize.js';

type Request = MachineRequest<VSphereMachineSpec>;

export function vsphereMachines(sessions: VsphereSessionPool): MachineBackend<VSphereMachineSpec> {
  return {
    ensure: (connection: Connection, request: Request, options: EnsureOptions) => sessions.use(connection, (client) => ensure(client, request, options)),
    destroy: (connection: Connection, request: Request, log: Logger) => sessions.use(connection, (client) => destroy(client, request, log)),
  };
}

async function ensure(client: VsphereClient, request: Request, options: EnsureOptions): Promise<MachineObservation | undefined> {
  const actions: MachineAction[] = [];
  let vm = await client.search.findVmByBiosUuid(request.uuid);
  if (vm) {
    if (options.firstBoot) actions.push('Adopted');
  } else {
    if (!options.mayCreate) return undefined;
    const cloned = await clone(client, request, options.log);
    vm = cloned.vm;
    actions.push(cloned.adopted ? 'Adopted' : 'Created');
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
    ref: vm.value,
    powerState: POWER_STATE[summary.powerState],
    addresses: addressesOf(summary),
    actions,
    statusFields: { vmRef: vm.value, biosUuid: request.uuid },
    ...(pending ? { pending } : {}),
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

async function clone(client: VsphereClient, request: Request, log: Logger): Promise<{ vm: ManagedObjectReference; adopted: boolean }> {
  const targets = await resolveCloneTargets(client, request.spec, request.raw);
  const spec = buildCloneSpec(request.spec, request.uuid, targets, await client.vms.hardware(targets.template));
  const task = await client.vms.startClone(targets.template, targets.folder, request.name, spec);
  log.info({ task: task.value, uuid: request.uuid, datacenter: targets.datacenter.name, cluster: targets.cluster.name }, 'CloneVM_Task started');
  try {
    const { result } = await client.tasks.wait(task);
    const vm = result === undefined ? await client.search.findVmByBiosUuid(request.uuid) : toMoRef(result);
    if (!vm) throw new BackendError(BackendErrorKind.TaskFailed, `CloneVM_Task ${task.value} succeeded but no VM has UUID ${request.uuid}`);
    return { vm, adopted: false };
  } catch (err) {
    if (!isVsphereFault(err, 'DuplicateName')) throw err;
    // An earlier clone (before a crash or restart) got there first: ours if it has our UUID.
    const existing = await client.search.findVmByBiosUuid(request.uuid);
    if (existing) return { vm: existing, adopted: true };
    throw new BackendError(BackendErrorKind.Rejected, `a VM named ${request.name} already exists in the target folder and is not this machine's (its BIOS UUID is not ${request.uuid})`);
  }
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

async function destroy(client: VsphereClient, request: Request, log: Logger): Promise<boolean> {
  const vm = await client.search.findVmByBiosUuid(request.uuid);
  if (!vm) return false;
  try {
    const { powerState } = await client.vms.summary(vm);
    if (powerState !== 'poweredOff') await tolerateRace(client.vms.powerOff(vm));
    await client.vms.destroy(vm);
    log.info({ vm: vm.value, uuid: request.uuid }, 'Destroyed the VM');
    return true;
  } catch (err) {
    // Gone meanwhile: what we wanted.
    if (isBackendError(err, BackendErrorKind.NotFound)) return false;
    throw err;
  }
}

const POWER_STATE: Record<VirtualMachinePowerState, PowerState> = { poweredOn: 'PoweredOn', poweredOff: 'PoweredOff', suspended: 'Suspended' };

/** Guest-reported addresses, primary first, without link-local and loopback ones. */
export function addressesOf(summary: VmSummary): MachineAddress[] {
  const all = [summary.ipAddress, ...summary.guestNics.flatMap((nic) => nic.ipAddresses)];
  const usable = all.filter((ip): ip is string => !!ip && !/^(fe[89ab][0-9a-f]:|169\.254\.|127\.|::1$|::ffff:127\.)/i.test(ip)).map((ip) => ip.toLowerCase());
  return [...new Set(usable)].map((address) => ({ type: 'InternalIP', address }));
}
