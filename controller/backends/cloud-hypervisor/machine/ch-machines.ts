// CloudHypervisorMachine on this host, as the steps of the machine recipe (kit/machine/). The
// machine's UUID names its state directory, its VMM's SMBIOS system UUID, its taps and MACs,
// so every pass (and a restarted provider) finds the VM again by it, never by name; the
// record in that directory carries its mark. A pass: the record (made first, before anything
// else: provision.ts), the VMM found (adoption: answering, the record's VM), the seed before
// the first boot, CPUs and memory, power (power.ts: files and taps made before a start),
// addresses. A VMM that died behind banlieue's back is reported in status.lastVmmExit and
// started again from the saved config as desiredPowerState says, on its own disk only: a
// machine that may not create a VM whose VMM and OS disk are both gone is reported Absent,
// never given a blank disk.
import type { MachineAddress, PowerState } from '../../../../infra/api/machine-fields.js';
import { Reason } from '../../../../infra/api/conditions.js';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { machineBackend } from '../../kit/machine/machine-backend.js';
import type { Found, MachineSteps, Owned, Pass, Report, Step } from '../../kit/machine/steps.js';
import type { VmConfig } from '../client/vmm-types.js';
import { vmmPaths } from '../state-dir.js';
import { scanVmm } from '../vmm-adoption.js';
import { toAddresses, isStaticOnly, type AddressNic } from './addresses.js';
import { destroyLeftovers, destroyMachine } from './destroy.js';
import { findVmm, liveOf } from './find-vmm.js';
import type { HostRuntime } from './host-runtime.js';
import { assertThisHost } from './host-placement.js';
import { isPoweredOff, readRecord, setPoweredOff, writeRecord, type ChVm, type MachineRecord } from './machine-record.js';
import { convergePower, observedPower, type LiveVmm } from './power.js';
import { hasOsDisk, OS_DISK } from './os-disk.js';
import { ensureMachineFiles, ensureSeed, recordMachine } from './provision.js';
import { unmarkRecord } from './release.js';
import { resizedConfig } from './vm-config.js';

type Spec = CloudHypervisorMachineSpec;

/** What a pass saw: the record as it stands, the VMM, and a restart of a VMM that died behind banlieue's back. */
interface Seen {
  readonly power: PowerState;
  readonly record: MachineRecord;
  readonly live: LiveVmm;
  readonly exit?: { readonly at: string; readonly note: string };
}

export function cloudHypervisorMachines(host: HostRuntime): MachineBackend<Spec> {
  return machineBackend<Spec, HostRuntime, ChVm, Seen>((_connection, work) => work(host), chSteps);
}

function chSteps(host: HostRuntime): MachineSteps<Spec, ChVm, Seen> {
  return {
    find: (request) => find(host, request),
    create: async (request, options) => {
      await recordMachine(host, vmmPaths(host.config.stateRoot, request.uuid), request);
      options.log.info({ uuid: request.uuid }, 'Creating the VM');
      return { state: 'Ended', task: 'the machine record', creates: true, actions: ['Created'] };
    },
    observe: (vm, pass) => observe(host, vm, pass),
    writeGuestData: async ({ paths }, seen, { request, desired }) => {
      // Written with the files a start needs: a VM to stay off gets it when it first starts.
      if (desired === 'PoweredOff') return { state: 'Done', seen };
      return { state: 'Done', seen, actions: (await ensureSeed(paths, request, seen.record)) ? ['GuestDataWritten'] : [] };
    },
    resize: (vm, seen, pass) => resize(vm, seen, pass),
    power: (vm, seen, pass) => power(host, vm, seen, pass),
    report: (vm, seen, pass) => report(host, vm, seen, pass.request),
    destroy: (vm, request, options) => destroyMachine(host, vm, request, options),
    destroyLeftovers: (request) => destroyLeftovers(host, request),
    unmark: (vm, releasedFrom) => unmarkRecord(vm, releasedFrom),
  };
}

/**
 * The machine's directory with its record and the record's marks. Without a record, a VMM
 * that serves the directory is a VM without a mark (the record is written before any VMM
 * starts); nothing else is a VM.
 */
async function find(host: HostRuntime, request: MachineRequest<Spec>): Promise<Found<ChVm> | undefined> {
  assertThisHost(host.config, request.raw);
  const paths = vmmPaths(host.config.stateRoot, request.uuid);
  const record = await readRecord(paths);
  if (record) return { ref: paths.dir, vm: { paths, record }, marks: { owner: record.owner, releasedFrom: record.releasedFrom } };
  if (liveOf(await scanVmm(host.vmm, paths.uuid), paths)) return { ref: paths.dir, vm: undefined, marks: { owner: undefined, releasedFrom: undefined } };
  return undefined;
}

async function observe(host: HostRuntime, { paths, record }: Owned<ChVm>, { request, options }: Pass<Spec>): Promise<Seen | 'Gone'> {
  const live = await findVmm(host, paths, record);
  if (!live && !options.mayCreate && !(await hasOsDisk(record.diskDir))) {
    // A VM that may not be created (provisioned, or not derived here) is its VMM and its OS disk: with both gone,
    // a blank overlay under its UUID would be a new VM passing for it, its data gone unsaid (ADR 22, row 21).
    // Reported as gone; a disk back in place (a storage mounted again) is found on a later pass.
    options.log.info(
      { uuid: request.uuid, disk: `${record.diskDir}/${OS_DISK}` },
      'The OS disk and VMM are gone: reporting the VM missing, not re-creating it',
    );
    return 'Gone';
  }
  return { power: observedPower(live), record, live };
}

/**
 * CPUs and memory of a changed spec: saved for the next VMM start, and applied to a running
 * VM with vm.resize where it allows (up to max_vcpus and the hot-plug room); what it refuses
 * waits for a power cycle (pending).
 */
async function resize({ paths }: Owned<ChVm>, seen: Seen, { request, options }: Pass<Spec>): Promise<Step<Seen>> {
  if (options.firstBoot) return { state: 'Done', seen };
  const { record, live } = seen;
  const notes: string[] = [];
  if (live && request.spec.osDiskSizeGiB > record.osDiskSizeGiB) notes.push(`the OS disk grows to ${request.spec.osDiskSizeGiB} GiB at the next power-on`);
  const config = resizedConfig(record.config, request.spec);
  if (!config) return { state: 'Done', seen, ...pendingOf(notes) };
  const next = { ...seen, record: { ...record, config } };
  await writeRecord(paths, next.record);
  const running = live?.vm?.state === 'Running' || live?.vm?.state === 'Paused';
  if (!running || !live) return { state: 'Done', seen: next, actions: ['Reconfigured'], ...pendingOf(notes) };
  const applied = await resizeRunning(live, config);
  return { state: 'Done', seen: next, actions: applied.actions, ...pendingOf([...notes, ...applied.notes]) };
}

/**
 * The saved `config`'s CPUs and memory applied to a running VM with vm.resize: vCPUs up to
 * the max_vcpus it started with. A new max_vcpus, or a change the VMM rejects, waits for the
 * next power-on and is said in the notes.
 */
async function resizeRunning(live: NonNullable<LiveVmm>, config: VmConfig): Promise<{ actions: MachineAction[]; notes: string[] }> {
  const notes: string[] = [];
  const liveCpus = live.vm?.config.cpus;
  if (config.cpus?.max_vcpus !== liveCpus?.max_vcpus) notes.push(`max vCPUs ${config.cpus?.max_vcpus ?? ''} apply at the next power-on`);
  try {
    await live.handle.client.resizeVm({
      desired_vcpus: Math.min(config.cpus?.boot_vcpus ?? 1, liveCpus?.max_vcpus ?? 1),
      desired_ram: config.memory?.size ?? 0,
    });
    return { actions: ['Reconfigured'], notes };
  } catch (error) {
    if (!(error instanceof BackendError) || error.kind !== BackendErrorKind.Rejected) throw error;
    notes.push(`CPU/memory change applies at the next power-on: ${error.message}`);
    return { actions: [], notes };
  }
}

/**
 * One step toward the desired power: before a VMM starts, its files and taps (a VMM that
 * exited without banlieue stopping it is said, in status.lastVmmExit and a Warning); a VM to
 * stay off is recorded as stopped by banlieue, so what follows is not a crash.
 */
async function power(host: HostRuntime, { paths }: Owned<ChVm>, seen: Seen, { request, options, desired }: Pass<Spec>): Promise<Step<Seen>> {
  let { record } = seen;
  let exit: Seen['exit'];
  if (!seen.live && desired !== 'PoweredOff') {
    if (!options.firstBoot && !(await isPoweredOff(paths))) {
      exit = {
        at: host.now().toISOString(),
        note: `the VMM exited without banlieue stopping it; started again from its saved config (desiredPowerState ${desired})`,
      };
      options.log.warn({ uuid: request.uuid, dir: paths.dir }, 'The VMM exited behind the provider; starting it again');
    }
    record = await ensureMachineFiles(host, paths, request, record);
  } else if (!seen.live && !(await isPoweredOff(paths))) {
    await setPoweredOff(paths, true);
  }
  const step = await convergePower(host, record, seen.live, desired);
  if (step.state === 'waiting') return { state: 'Started', taskRef: step.taskRef, reason: step.reason, message: step.message };
  return { state: 'Done', seen: { power: step.power, record, live: step.live, ...(exit ? { exit } : {}) }, actions: step.actions };
}

async function report(host: HostRuntime, { paths }: Owned<ChVm>, { power: powerState, record, exit }: Seen, request: MachineRequest<Spec>): Promise<Report> {
  const found = await addressesOf(host, record, request.spec, powerState);
  return {
    ref: paths.dir,
    powerState,
    addresses: found.addresses,
    ...(record.taps.length === 0 ? { withoutNetwork: true } : {}),
    statusFields: {
      hostUid: host.config.hostName,
      ...(found.source ? { addressSource: found.source } : {}),
      ...(exit ? { lastVmmExit: `${exit.at}: ${exit.note}` } : {}),
    },
    ...(exit ? { warnings: [{ reason: Reason.VMRestarted, message: `VM with UUID ${request.uuid}: ${exit.note}` }] } : {}),
  };
}

function pendingOf(notes: readonly string[]): { pending?: string } {
  return notes.length > 0 ? { pending: notes.join('; ') } : {};
}

async function addressesOf(
  host: HostRuntime,
  record: MachineRecord,
  spec: Spec,
  power: PowerState,
): Promise<{ addresses: MachineAddress[]; source?: 'static' | 'neighbour' }> {
  if (power === 'PoweredOff') return { addresses: [] };
  const nics: AddressNic[] = record.taps.map((tap, i) => {
    const address = spec.nics?.[i]?.ipam?.static?.address;
    return { mac: record.config.net?.[i]?.mac ?? '', bridge: tap.bridge, ...(address ? { staticAddress: address } : {}) };
  });
  if (nics.length === 0) return { addresses: [] };
  return toAddresses(nics, isStaticOnly(nics) ? [] : await host.ip.neighbours());
}
