// CloudHypervisorMachine on this host. The machine's UUID names its state
// directory, its VMM's SMBIOS system UUID, its taps and MACs, so every pass (and
// a restarted provider) finds the VM again by it, never by name. A pass: check
// the machine is this host's and its record carries the machine's mark (ADR 16),
// find its VMM (adoption: answering, our UUID), make what is missing (record,
// disk, seed, taps: provision.ts), converge power (power.ts), read addresses.
// A VMM that died behind banlieue's back is reported in status.lastVmmExit and
// started again from the saved config as desiredPowerState says, on its own
// disk only: a machine that may not create a VM whose VMM and OS disk are both
// gone is reported Absent, never given a blank disk.
import type { MachineAddress, PowerState } from '../../../../infra/api/common.js';
import { Reason } from '../../../../infra/api/conditions.js';
import type { CloudHypervisorMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { Connection, DestroyOptions, EnsureOptions, EnsureResult, MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { withSignal } from '../../cancellation.js';
import { assertOwnedBy } from '../../ownership.js';
import { vmmPaths, type VmmPaths } from '../state-dir.js';
import { toAddresses, isStaticOnly, type AddressNic } from './addresses.js';
import { destroyMachine } from './destroy.js';
import { findVmm } from './find-vmm.js';
import type { HostRuntime } from './host-runtime.js';
import { assertThisHost } from './host-placement.js';
import { isPoweredOff, readRecord, setPoweredOff, writeRecord, type MachineRecord } from './machine-record.js';
import { convergePower, observedPower, type LiveVmm } from './power.js';
import { hasOsDisk, OS_DISK } from './os-disk.js';
import { ensureMachineFiles, recordMachine } from './provision.js';
import { releaseMachine } from './release.js';
import { resizedConfig } from './vm-config.js';

type Spec = CloudHypervisorMachineSpec;
type Request = MachineRequest<Spec>;

export function cloudHypervisorMachines(host: HostRuntime): MachineBackend<Spec> {
  return {
    ensure: (_connection: Connection, request: Request, options: EnsureOptions) => withSignal(options.signal, () => ensure(host, request, options)),
    destroy: (_connection: Connection, request: Request, options: DestroyOptions) => withSignal(options.signal, () => destroyMachine(host, request, options)),
    release: (_connection: Connection, request: Request, options: DestroyOptions) => withSignal(options.signal, () => releaseMachine(host, request, options)),
  };
}

async function ensure(host: HostRuntime, request: Request, options: EnsureOptions): Promise<EnsureResult> {
  assertThisHost(host.config, request.raw);
  const paths = vmmPaths(host.config.stateRoot, request.uuid);
  const actions: MachineAction[] = [];
  let record = await readRecord(paths);
  if (record) assertOwnedBy(request.owner, request.uuid, record.owner);
  let live = await findVmm(host, paths, request);
  if (!record) {
    // The record is written before any VMM starts: a VMM without one is not ours.
    if (live) throw new BackendError(BackendErrorKind.NotOwned, `a VMM serves ${paths.dir}, which has no banlieue machine record`);
    if (!options.mayCreate) return { state: 'Absent' };
    record = await recordMachine(host, paths, request);
    options.log.info({ uuid: request.uuid, dir: paths.dir }, 'Creating the VM');
    actions.push('Created');
  } else if (options.firstBoot) {
    actions.push('Adopted');
  }
  if (!live && !options.mayCreate && !(await hasOsDisk(record.diskDir))) {
    // A VM that may not be created (provisioned, or not derived here) is its VMM and its OS disk: with both gone,
    // a blank overlay under its UUID would be a new VM passing for it, its data gone unsaid (ADR 22, row 21).
    // Reported as gone; a disk back in place (a storage mounted again) is found on a later pass.
    options.log.info({ uuid: request.uuid, disk: `${record.diskDir}/${OS_DISK}` }, 'The OS disk and VMM are gone: reporting the VM missing, not re-creating it');
    return { state: 'Absent' };
  }
  const desired: PowerState = request.spec.desiredPowerState ?? 'PoweredOn';
  const notes: string[] = [];
  // What restarting a VMM that died behind banlieue's back tells the user: status.lastVmmExit and a Warning Event.
  let exit: { readonly at: string; readonly note: string } | undefined;
  if (!live && desired !== 'PoweredOff') {
    if (!options.firstBoot && !(await isPoweredOff(paths))) {
      exit = { at: host.now().toISOString(), note: `the VMM exited without banlieue stopping it; started again from its saved config (desiredPowerState ${desired})` };
      options.log.warn({ uuid: request.uuid, dir: paths.dir }, 'The VMM exited behind the provider; starting it again');
    }
    record = await resized(paths, record, request, options, undefined, notes, actions);
    const files = await ensureMachineFiles(host, paths, request, record);
    record = files.record;
    if (files.seedWritten && options.firstBoot) actions.push('GuestDataWritten');
  } else if (live) {
    record = await resized(paths, record, request, options, live, notes, actions);
  } else if (!(await isPoweredOff(paths))) {
    // Off and to stay off: what follows is not a crash.
    await setPoweredOff(paths, true);
  }
  const step = await convergePower(host, record, live, desired);
  if (step.state === 'waiting') return { state: 'InProgress', taskRef: step.taskRef, reason: step.reason, message: step.message, actions };
  live = step.live;
  actions.push(...step.actions);
  const found = await addressesOf(host, record, request.spec, step.power);
  return {
    state: 'Present',
    observation: {
      ref: paths.dir,
      powerState: observedPower(live),
      addresses: found.addresses,
      ...(record.taps.length === 0 ? { withoutNetwork: true } : {}),
      actions,
      statusFields: { hostUid: host.config.hostName, ...(found.source ? { addressSource: found.source } : {}), ...(exit ? { lastVmmExit: `${exit.at}: ${exit.note}` } : {}) },
      ...(notes.length > 0 ? { pending: notes.join('; ') } : {}),
      ...(exit ? { warnings: [{ reason: Reason.VMRestarted, message: `VM with UUID ${request.uuid}: ${exit.note}` }] } : {}),
    },
  };
}

/**
 * CPUs and memory of a changed spec: saved for the next VMM start, and applied
 * to a running VM with vm.resize where it allows (up to max_vcpus and the
 * hot-plug room); what it refuses waits for a power cycle (a note).
 */
async function resized(paths: VmmPaths, record: MachineRecord, request: Request, options: EnsureOptions, live: LiveVmm, notes: string[], actions: MachineAction[]): Promise<MachineRecord> {
  if (!options.specChanged || options.firstBoot) return record;
  if (live && request.spec.osDiskSizeGiB > record.osDiskSizeGiB) notes.push(`the OS disk grows to ${request.spec.osDiskSizeGiB} GiB at the next power-on`);
  const config = resizedConfig(record.config, request.spec);
  if (!config) return record;
  const next = { ...record, config };
  await writeRecord(paths, next);
  const running = live?.vm?.state === 'Running' || live?.vm?.state === 'Paused';
  if (!running || !live) {
    actions.push('Reconfigured');
    return next;
  }
  const liveCpus = live.vm?.config.cpus;
  if (config.cpus?.max_vcpus !== liveCpus?.max_vcpus) notes.push(`max vCPUs ${config.cpus?.max_vcpus ?? ''} apply at the next power-on`);
  try {
    await live.handle.client.resizeVm({ desired_vcpus: Math.min(config.cpus?.boot_vcpus ?? 1, liveCpus?.max_vcpus ?? 1), desired_ram: config.memory?.size ?? 0 });
    actions.push('Reconfigured');
  } catch (error) {
    if (!(error instanceof BackendError) || error.kind !== BackendErrorKind.Rejected) throw error;
    notes.push(`CPU/memory change applies at the next power-on: ${error.message}`);
  }
  return next;
}

async function addressesOf(host: HostRuntime, record: MachineRecord, spec: Spec, power: PowerState): Promise<{ addresses: MachineAddress[]; source?: 'static' | 'neighbour' }> {
  if (power === 'PoweredOff') return { addresses: [] };
  const nics: AddressNic[] = record.taps.map((tap, i) => {
    const address = spec.nics?.[i]?.ipam?.static?.address;
    return { mac: record.config.net?.[i]?.mac ?? '', bridge: tap.bridge, ...(address ? { staticAddress: address } : {}) };
  });
  if (nics.length === 0) return { addresses: [] };
  return toAddresses(nics, isStaticOnly(nics) ? [] : await host.ip.neighbours());
}
