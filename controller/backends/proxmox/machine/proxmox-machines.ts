// ProxmoxMachine on a PVE cluster, as the steps of the machine recipe (kit/machine/). The VM
// is found by its UUID (vm-locator.ts) with its config, which carries its marks; each step
// that changes it is one PVE task, started and returned, never awaited (ADR 14):
//
//   clone → seed ISO upload → config (identity, hardware, NICs, disks, seed)
//   → disk growth → power (start, ACPI shutdown with PVE's deadline, suspend)
//
// The first-boot steps run only while the VM has never been provisioned and is off;
// afterwards a spec change converges CPUs, memory and disk growth. Every step is computed
// from the VM's config as read in the pass, so a pass after a crash takes the same step
// again or the next one, never a second clone.
import type { MachineAddress, PowerState } from '../../../../infra/api/machine-fields.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { toNoCloudIso } from '../../cloud-init/nocloud-iso.js';
import { machineBackend } from '../../kit/machine/machine-backend.js';
import type { Found, MachineSteps, Owned, Pass, Step } from '../../kit/machine/steps.js';
import type { SessionPool } from '../../kit/session-pool.js';
import type { ProxmoxClient } from '../client/proxmox-client.js';
import { isProxmoxError } from '../client/proxmox-error.js';
import type { VmRef } from '../client/qemu.js';
import type { QemuStatus } from '../client/wire-types.js';
import { agentAddresses, staticAddresses, type AddressSource } from './addresses.js';
import { nodeOf, startClone } from './clone.js';
import { MachineDeletion } from './deletion.js';
import { macOf } from './mac-address.js';
import { nextPowerStep, powerStateOf, type PowerStep } from './power.js';
import { reachable } from './reachable.js';
import { unmarkVm } from './release.js';
import { needsSeed, seedFileName, seedFiles, seedStorage, seedVolume } from './seed.js';
import { formatTaskRef } from './task-ref.js';
import { readTask } from './tasks.js';
import { describeChange, diskGrowths, firstBootChange, hardwareChange, identityChange, unattachedDisks } from './vm-config.js';
import { VmLocator, type FoundVm, type PassView } from './vm-locator.js';
import { marksOf } from './vm-marks.js';

type Request = MachineRequest<ProxmoxMachineSpec>;

/** How long PVE waits for the guest to act on an ACPI shutdown before it stops the VM (forceStop). */
export const SHUTDOWN_TIMEOUT_S = 120;

/** What a pass saw: the VM's status as read once. */
interface Seen {
  readonly power: PowerState;
  readonly status: QemuStatus;
}

export function proxmoxMachines(pool: SessionPool<ProxmoxClient>): MachineBackend<ProxmoxMachineSpec> {
  const locator = new VmLocator();
  const deletion = new MachineDeletion();
  return machineBackend(pool.use, (client) => proxmoxSteps(locator.pass(client), deletion));
}

function proxmoxSteps(view: PassView, deletion: MachineDeletion): MachineSteps<ProxmoxMachineSpec, FoundVm, Seen> {
  return {
    readTask: (_request, taskRef) => readTask(view.client, taskRef),
    find: (request, look) => find(view, request, look.hint, look.provisioned),
    create: (request, options) => startClone(view, request, options),
    // A task we do not know of (ours, from before a crash, or someone's) holds the VM: look again soon.
    busy: ({ ref, config }) =>
      config.lock === undefined
        ? undefined
        : { taskRef: `${ref.node}/${ref.vmid} lock:${config.lock}`, message: `VM ${ref.vmid} on ${ref.node} is locked (${config.lock})` },
    observe: async ({ ref }) => {
      const status = await reachable(ref.node, () => view.client.qemu.status(ref));
      return { power: powerStateOf(status), status };
    },
    writeGuestData: async (vm, seen, pass) => (await firstBootStep(view, pass.request, vm)) ?? { state: 'Done', seen },
    resize: (vm, seen, pass) => (pass.options.firstBoot ? Promise.resolve({ state: 'Done', seen }) : specChangeStep(view, pass.request, vm, seen)),
    power: (vm, seen, pass) => powerStep(view, vm, seen, pass),
    report: async ({ ref }, seen, pass) => {
      const { addresses, source } = await addressesOf(view, pass.request, ref, seen.status, seen.power);
      return {
        ref: `${ref.node}/${ref.vmid}`,
        powerState: seen.power,
        addresses,
        statusFields: { node: ref.node, vmid: ref.vmid, ...(source ? { addressSource: source } : {}) },
      };
    },
    destroy: (vm, request, options) => deletion.destroy(view, vm, request, options),
    destroyLeftovers: (request, options) => deletion.leftovers(view, request, options),
    unmark: (vm, releasedFrom, request) => unmarkVm(view, vm, releasedFrom, request.owner),
    forget: (request) => view.forget(request),
  };
}

/** The machine's VM with its config (which carries its marks); a provisioned machine's only by its smbios1 UUID (vm-locator.ts). */
async function find(view: PassView, request: Request, hint: string | undefined, provisioned: boolean): Promise<Found<FoundVm> | undefined> {
  const found = await reachable(nodeOf(request), () => view.find(request, { hint: vmRefOf(hint), provisioned }));
  return found && { ref: `${found.ref.node}/${found.ref.vmid}`, vm: found, marks: marksOf(found.config.description) };
}

/** `pve1/101` → its VmRef; anything else is no place to look. */
function vmRefOf(ref: string | undefined): VmRef | undefined {
  const match = /^([^/]+)\/(\d+)$/.exec(ref ?? '');
  return match?.[1] && match[2] ? { node: match[1], vmid: Number(match[2]) } : undefined;
}

/** One power task toward the desired state, started; none when it is there. */
async function powerStep(view: PassView, { ref }: Owned<FoundVm>, seen: Seen, pass: Pass<ProxmoxMachineSpec>): Promise<Step<Seen>> {
  const step = nextPowerStep(seen.power, pass.desired);
  if (!step) return { state: 'Done', seen };
  const upid = await startPowerStep(view, ref, step);
  pass.options.log.info({ vmid: ref.vmid, node: ref.node, step, task: upid }, 'Power task started');
  return {
    state: 'Started',
    taskRef: formatTaskRef(ref, upid),
    message: `${step} of VM ${ref.vmid} on ${ref.node} started (the VM is ${seen.power}, to be ${pass.desired})`,
  };
}

/** The next first-boot step of a VM that is off, one task: upload the seed, configure, grow a disk; undefined when all are done. */
async function firstBootStep(view: PassView, request: Request, { ref, config }: Owned<FoundVm>): Promise<Step<Seen> | undefined> {
  const { spec } = request;
  const isoStorage = seedStorage(spec, request.raw);
  const wanted = needsSeed(spec, request.userData);
  if (wanted && isoStorage === undefined) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `the machine has user-data or a static address but neither spec.isoStorage nor its failure domain names a storage for the seed ISO (a storage with iso content)`,
    );
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
  const change = {
    ...firstBootChange({ spec, uuid: request.uuid, ...(seed ? { seedVolume: seed } : {}) }, config),
    ...identityChange(config, request.uuid, request.owner),
  };
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
async function specChangeStep(view: PassView, request: Request, { ref, config }: Owned<FoundVm>, seen: Seen): Promise<Step<Seen>> {
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
  if (seen.status.status === 'running') {
    // The config read above has pending values applied; the running VM's own are `current`.
    const running = await view.client.qemu.config(ref, { current: true });
    const waiting = hardwareChange(request.spec, running);
    if (Object.keys(waiting).length > 0) notes.push(`${describeChange(waiting)} change applies at the VM's next power-off and start (pending in PVE)`);
  }
  return { state: 'Done', seen, actions, ...(notes.length > 0 ? { pending: notes.join('; ') } : {}) };
}

function inProgress(ref: VmRef, upid: string, message: string, actions: MachineAction[]): Step<Seen> {
  return { state: 'Started', taskRef: formatTaskRef(ref, upid), message, actions };
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
async function addressesOf(
  view: PassView,
  request: Request,
  ref: VmRef,
  status: QemuStatus,
  power: string,
): Promise<{ addresses: MachineAddress[]; source?: AddressSource }> {
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
