// ProxmoxMachine on a PVE cluster. Every pass reads the task its last pass
// started (status.taskRef) and, while it runs, does nothing else; then it finds
// the VM by UUID (vm-locator.ts) and takes the next step, each step one PVE
// task that is started and returned `InProgress`, never awaited (ADR 14):
//
//   clone → seed ISO upload → config (identity, hardware, NICs, disks, seed)
//   → disk growth → power (start, ACPI shutdown with PVE's deadline, suspend)
//
// The first-boot steps run only while the VM has never been provisioned and
// is off; afterwards a spec change converges CPUs, memory and disk growth.
// Every step is computed from the VM's config as read in the pass, so a pass
// after a crash takes the same step again or the next one, never a second clone.
import type { MachineAddress } from '../../../../infra/api/common.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { Connection, DestroyOptions, EnsureOptions, EnsureResult, MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { withSignal } from '../../cancellation.js';
import { toNoCloudIso } from '../../cloud-init/nocloud-iso.js';
import { assertOwnedBy } from '../../ownership.js';
import { macOf } from './mac-address.js';
import type { ProxmoxClientPool } from '../client-pool.js';
import { isProxmoxError } from '../client/proxmox-error.js';
import type { VmRef } from '../client/qemu.js';
import type { QemuStatus } from '../client/wire-types.js';
import { agentAddresses, staticAddresses, type AddressSource } from './addresses.js';
import { nodeOf, startClone } from './clone.js';
import { reachable } from './reachable.js';
import { MachineDeletion } from './deletion.js';
import { releaseMachineVm } from './release.js';
import { nextPowerStep, powerStateOf, type PowerStep } from './power.js';
import { needsSeed, seedFileName, seedFiles, seedStorage, seedVolume } from './seed.js';
import { formatTaskRef } from './task-ref.js';
import { describeTask, pickUpTask } from './tasks.js';
import { describeChange, diskGrowths, firstBootChange, hardwareChange, identityChange, unattachedDisks } from './vm-config.js';
import { VmLocator, type FoundVm, type PassView } from './vm-locator.js';
import { markOf } from './vm-marks.js';

type Request = MachineRequest<ProxmoxMachineSpec>;

/** How long PVE waits for the guest to act on an ACPI shutdown before it stops the VM (forceStop). */
export const SHUTDOWN_TIMEOUT_S = 120;

export function proxmoxMachines(pool: ProxmoxClientPool): MachineBackend<ProxmoxMachineSpec> {
  const locator = new VmLocator();
  const deletion = new MachineDeletion();
  return {
    ensure: (connection: Connection, request: Request, options: EnsureOptions) =>
      withSignal(options.signal, () => pool.use(connection, (client) => ensure(locator.pass(client), request, options))),
    destroy: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () => pool.use(connection, (client) => deletion.destroy(locator.pass(client), request, options))),
    release: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () => pool.use(connection, (client) => releaseMachineVm(locator.pass(client), request, options))),
  };
}

/** The action a finished task of ours stands for, as an Event. */
const DONE_ACTIONS: Readonly<Record<string, MachineAction>> = { qmclone: 'Created', qmstart: 'PoweredOn', qmresume: 'PoweredOn', qmshutdown: 'PoweredOff', qmstop: 'PoweredOff', qmsuspend: 'Suspended' };

async function ensure(view: PassView, request: Request, options: EnsureOptions): Promise<EnsureResult> {
  const picked = await pickUpTask(view.client, request.taskRef);
  // While our task runs, one task read is the whole pass.
  if (picked.state === 'running') return { state: 'InProgress', taskRef: picked.taskRef, message: `${describeTask(picked.task)} is running`, actions: [] };
  const finished = picked.state === 'done' ? picked.task : undefined;
  const actions: MachineAction[] = [];
  const done = finished && DONE_ACTIONS[finished.upid.type];
  if (done) actions.push(done);

  // Provisioned, the machine's VM is the one with its smbios1 UUID: a copy naming it in its description is not.
  const found = await reachable(nodeOf(request), () => view.find(request, { hint: finished?.vm, provisioned: !options.firstBoot }));
  if (!found) {
    if (finished?.upid.type === 'qmclone') throw new BackendError(BackendErrorKind.TaskFailed, `${describeTask(finished)} succeeded but no VM carries UUID ${request.uuid}`);
    if (!options.mayCreate) return { state: 'Absent' };
    return startClone(view, request, options);
  }
  const { ref, config } = found;
  if (config.lock !== undefined) {
    // A task we do not know of (ours, from before a crash, or someone's) holds the VM: look again soon.
    return { state: 'InProgress', taskRef: request.taskRef ?? `${ref.node}/${ref.vmid} lock:${config.lock}`, message: `VM ${ref.vmid} on ${ref.node} is locked (${config.lock})`, actions };
  }
  if (options.firstBoot) {
    // Not made by a task of ours this pass: only with our mark (a UUID can be copied).
    assertOwnedBy(request.owner, request.uuid, markOf(config.description));
    if (!finished) actions.push('Adopted');
  }
  const status = await reachable(ref.node, () => view.client.qemu.status(ref));
  const power = powerStateOf(status);
  let pending: string | undefined;
  if (options.firstBoot && power === 'PoweredOff') {
    const step = await firstBootStep(view, request, found);
    if (step) return { ...step, actions: [...actions, ...step.actions] };
  } else if (!options.firstBoot && options.specChanged) {
    const step = await specChangeStep(view, request, found, status);
    if ('taskRef' in step) return { ...step, actions: [...actions, ...step.actions] };
    actions.push(...step.actions);
    pending = step.pending;
  }
  const desired = request.spec.desiredPowerState ?? 'PoweredOn';
  const powerStep = nextPowerStep(power, desired);
  if (powerStep) {
    const upid = await startPowerStep(view, ref, powerStep);
    options.log.info({ vmid: ref.vmid, node: ref.node, step: powerStep, task: upid }, 'Power task started');
    return { state: 'InProgress', taskRef: formatTaskRef(ref, upid), message: `${powerStep} of VM ${ref.vmid} on ${ref.node} started (the VM is ${power}, to be ${desired})`, actions };
  }
  const { addresses, source } = await addressesOf(view, request, ref, status, power);
  return {
    state: 'Present',
    observation: {
      ref: `${ref.node}/${ref.vmid}`,
      powerState: power,
      addresses,
      actions,
      statusFields: { node: ref.node, vmid: ref.vmid, ...(source ? { addressSource: source } : {}) },
      ...(pending ? { pending } : {}),
    },
  };
}

type Step = Extract<EnsureResult, { state: 'InProgress' }>;

/** The next first-boot step of a VM that is off: upload the seed, configure, grow a disk; undefined when all are done. */
async function firstBootStep(view: PassView, request: Request, { ref, config }: FoundVm): Promise<Step | undefined> {
  const { spec } = request;
  const isoStorage = seedStorage(spec, request.raw);
  const wanted = needsSeed(spec, request.userData);
  if (wanted && isoStorage === undefined) {
    throw new BackendError(BackendErrorKind.Rejected, `the machine has user-data or a static address but neither spec.isoStorage nor its failure domain names a storage for the seed ISO (a storage with iso content)`);
  }
  const seed = wanted && isoStorage !== undefined ? seedVolume(isoStorage, request.uuid) : undefined;
  if (seed && isoStorage && !config.ide2?.startsWith(seed)) {
    const present = (await view.client.storage.content(ref.node, isoStorage, { content: 'iso' })).some((v) => v.volid === seed);
    if (!present) {
      const iso = toNoCloudIso(seedFiles({ hostname: request.name, uuid: request.uuid, providerID: request.providerID, spec, userData: request.userData }));
      const upid = await view.client.storage.upload({ node: ref.node, storage: isoStorage, content: 'iso', filename: seedFileName(request.uuid) }, iso);
      return inProgress(ref, upid, `seed ISO upload to ${isoStorage} on ${ref.node} started`, ['GuestDataWritten']);
    }
  }
  const change = { ...firstBootChange({ spec, uuid: request.uuid, ...(seed ? { seedVolume: seed } : {}) }, config), ...identityChange(config, request.uuid, request.owner) };
  if (Object.keys(change).length > 0) {
    // POST: PVE allocates new disks in a task; no digest, the VM is ours and off.
    const upid = await view.client.qemu.configAsync(ref, change);
    if (upid) return inProgress(ref, upid, `configuring VM ${ref.vmid} (${describeChange(change)})`, []);
  }
  const [growth] = diskGrowths(spec, config);
  if (growth) {
    const upid = await view.client.qemu.resize(ref, growth.disk, `${growth.sizeGiB}G`);
    return inProgress(ref, upid, `growing ${growth.disk} of VM ${ref.vmid} to ${growth.sizeGiB} GiB`, []);
  }
  return undefined;
}

/**
 * A spec changed after provisioning: CPUs, memory and disk growth. A running
 * VM takes disk growth at once and CPU/memory at its next cold start (PVE keeps
 * them pending unless hotplug is on); what waits is said in `pending`.
 */
async function specChangeStep(view: PassView, request: Request, { ref, config }: FoundVm, status: QemuStatus): Promise<Step | { actions: MachineAction[]; pending?: string }> {
  const change = hardwareChange(request.spec, config);
  if (Object.keys(change).length > 0) {
    const upid = await view.client.qemu.configAsync(ref, change);
    if (upid) return inProgress(ref, upid, `reconfiguring VM ${ref.vmid} (${describeChange(change)})`, ['Reconfigured']);
  }
  const [growth] = diskGrowths(request.spec, config);
  if (growth) {
    const upid = await view.client.qemu.resize(ref, growth.disk, `${growth.sizeGiB}G`);
    return inProgress(ref, upid, `growing ${growth.disk} of VM ${ref.vmid} to ${growth.sizeGiB} GiB`, ['Reconfigured']);
  }
  const actions: MachineAction[] = Object.keys(change).length > 0 ? ['Reconfigured'] : [];
  const notes: string[] = [];
  const unattached = unattachedDisks(request.spec, config);
  if (unattached.length > 0) notes.push(`disks added after provisioning are not attached: ${unattached.join(', ')}`);
  if (status.status === 'running') {
    // The config read above has pending values applied; the running VM's own are `current`.
    const running = await view.client.qemu.config(ref, { current: true });
    const waiting = hardwareChange(request.spec, running);
    if (Object.keys(waiting).length > 0) notes.push(`${describeChange(waiting)} change applies at the VM's next power-off and start (pending in PVE)`);
  }
  return { actions, ...(notes.length > 0 ? { pending: notes.join('; ') } : {}) };
}

function inProgress(ref: VmRef, upid: string, message: string, actions: MachineAction[]): Step {
  return { state: 'InProgress', taskRef: formatTaskRef(ref, upid), message, actions };
}

function startPowerStep(view: PassView, ref: VmRef, step: PowerStep): Promise<string> {
  const { qemu } = view.client;
  switch (step) {
    case 'start':
      return qemu.start(ref);
    case 'shutdown':
      // ACPI first; PVE itself stops the VM when the guest has not shut down by the deadline.
      return qemu.shutdown(ref, { timeout: SHUTDOWN_TIMEOUT_S, forceStop: true });
    case 'stop':
      return qemu.stop(ref);
    case 'suspend':
      return qemu.suspend(ref);
    case 'resume':
      return qemu.resume(ref);
  }
}

/** Static addresses when the spec has any; else the guest agent's, while the VM runs (an agent not answering yet is no error). */
async function addressesOf(view: PassView, request: Request, ref: VmRef, status: QemuStatus, power: string): Promise<{ addresses: MachineAddress[]; source?: AddressSource }> {
  const fixed = staticAddresses(request.spec);
  if (fixed.length > 0) return { addresses: fixed, source: 'static' };
  if (power !== 'PoweredOn' || status.agent === false) return { addresses: [] };
  try {
    const macs = request.spec.nics.map((nic) => macOf(request.uuid, nic));
    return { addresses: agentAddresses(await view.client.qemu.agentInterfaces(ref), macs), source: 'guestAgent' };
  } catch (err) {
    // 500 "QEMU guest agent is not running": the guest has not started it yet.
    if (isProxmoxError(err) && err.status === 500) return { addresses: [] };
    throw err;
  }
}
