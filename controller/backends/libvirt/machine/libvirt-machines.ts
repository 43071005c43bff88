// LibvirtMachine on a libvirt host, as the steps of the machine recipe (kit/machine/). The
// domain is found by the machine's UUID (its <uuid>), never by name, with its <metadata>
// mark: one an earlier pass defined (before a crash, before its status write) is found again,
// never defined twice. A missing domain is made in one pass (define.ts). Power follows
// spec.desiredPowerState (power.ts), CPUs and memory follow the spec while the domain is off,
// addresses come from libvirt's sources (addresses.ts). Deleting undefines it and deletes its
// volumes (undefine.ts); releasing (deletionPolicy Retain) only swaps the mark in its
// <metadata>: the domain runs on with its volumes.
import type { PowerState } from '../../../../infra/api/machine-fields.js';
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { MachineAction, MachineBackend } from '../../backend.js';
import { machineBackend } from '../../kit/machine/machine-backend.js';
import type { Found, MachineSteps, Owned, Pass, Step } from '../../kit/machine/steps.js';
import type { SessionPool } from '../../kit/session-pool.js';
import type { Logger } from '../../../runtime/log.js';
import { AffectFlags, DomainState, MAXIMUM_FLAG } from '../client/constants.js';
import type { Domain } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { readAddresses, type AddressSourceName } from './addresses.js';
import { defineDomain } from './define.js';
import { marksOf, releasedMetadataXml } from './domain-xml.js';
import { macOf } from './mac-address.js';
import { ShutdownRequests, shutdownNote as noteOf } from '../../kit/machine/shutdown-grace.js';
import { decidePowerStep, isActive, toPowerState, type ObservedPower, type PowerStep } from './power.js';
import { deleteVolumes, lookup, undefineDomain } from './undefine.js';

/** What the backend remembers between passes, per machine UUID; losing it (a restart) costs a little time, never correctness. */
interface MachineMemory {
  /** When this provider asked the guest to shut down (power.ts: the grace period runs from here). */
  readonly shutdowns: ShutdownRequests;
  /** The address source that answered last. */
  readonly addressSource: Map<string, AddressSourceName>;
}

/** The domain's size as virDomainGetInfo reports it, read with its state. */
interface Size {
  readonly vcpus: number;
  readonly maxMemoryKiB: number;
}

/** What the pass saw of the domain; `shutdownNote` says how long a shutdown asked for still has. */
interface Seen {
  readonly power: PowerState;
  readonly observed: ObservedPower;
  readonly size: Size;
  readonly shutdownNote?: string;
}

export function libvirtMachines(sessions: SessionPool<LibvirtClient>): MachineBackend<LibvirtMachineSpec> {
  const memory: MachineMemory = { shutdowns: new ShutdownRequests(), addressSource: new Map() };
  return machineBackend(sessions.use, (client) => libvirtSteps(client, memory));
}

function libvirtSteps(client: LibvirtClient, memory: MachineMemory): MachineSteps<LibvirtMachineSpec, Domain, Seen> {
  return {
    find: (request) => find(client, request.uuid),
    create: (request, options) => defineDomain(client, request, options.log),
    observe: (domain) => observe(client, domain),
    resize: (domain, seen, pass) => convergeHardware(client, domain, seen, pass.request.spec),
    power: (domain, seen, pass) => convergePower(client, memory, domain, seen, pass),
    report: async (domain, seen, { request }) => {
      const macs = (request.spec.network ?? []).map((nic) => macOf(request.uuid, nic));
      const found =
        seen.power === 'PoweredOn' ? await readAddresses(client, domain, macs, memory.addressSource.get(request.uuid)) : { addresses: [], source: undefined };
      if (found.source) memory.addressSource.set(request.uuid, found.source);
      return {
        ref: domain.name,
        powerState: seen.power,
        addresses: found.addresses,
        ...(macs.length === 0 ? { withoutNetwork: true } : {}),
        statusFields: { domainUuid: domain.uuid, ...(found.source ? { addressSource: found.source } : {}) },
        ...(seen.shutdownNote ? { pending: seen.shutdownNote } : {}),
      };
    },
    destroy: (domain, request, options) => undefineDomain(client, domain, request, options),
    destroyLeftovers: (request, options) => deleteVolumes(client, request, options),
    unmark: async (domain, releasedFrom) => {
      // The persistent definition, and the running domain too when it runs (it may be defined again from either).
      const { state } = await client.domains.state(domain);
      const flags = isActive(state) ? AffectFlags.Live | AffectFlags.Config : AffectFlags.Config;
      await client.domains.setMetadataElement(domain, releasedMetadataXml(releasedFrom), flags);
    },
    forget: (request) => {
      memory.shutdowns.forget(request.uuid);
      memory.addressSource.delete(request.uuid);
    },
  };
}

/** The domain with this UUID and the marks of its <metadata>, or undefined. */
async function find(client: LibvirtClient, uuid: string): Promise<Found<Domain> | undefined> {
  const domain = await lookup(client, uuid);
  if (!domain) return undefined;
  try {
    return { ref: domain.name, vm: domain, marks: marksOf(await client.domains.xmlDesc(domain)) };
  } catch (err) {
    // Undefined between the lookup and the read.
    if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
    throw err;
  }
}

/** State and size in one call (virDomainGetInfo), and whether a shut-off domain holds a managed save image (a suspend). */
async function observe(client: LibvirtClient, domain: Domain): Promise<Seen> {
  const { state, vcpus, maxMemoryKiB } = await client.domains.info(domain);
  const managedSave = state === DomainState.Shutoff ? await client.domains.hasManagedSaveImage(domain) : false;
  const observed = { state, managedSave };
  return { power: toPowerState(observed), observed, size: { vcpus, maxMemoryKiB } };
}

/**
 * One power step (power.ts), the domain observed again after it. A shutdown's grace period is
 * spread over passes: its start is remembered, and the note says when the domain is destroyed.
 */
async function convergePower(
  client: LibvirtClient,
  memory: MachineMemory,
  domain: Owned<Domain>,
  seen: Seen,
  { request, desired, options }: Pass<LibvirtMachineSpec>,
): Promise<Step<Seen>> {
  const { uuid } = request;
  // A shutdown asked for earlier no longer counts once the spec wants the domain on (or saved).
  memory.shutdowns.settle(uuid, desired);
  const step = decidePowerStep(seen.observed, desired, memory.shutdowns.sinceOf(uuid), Date.now());
  const actions: MachineAction[] = [];
  let now = seen;
  if (step !== 'none') {
    const done = await applyPowerStep(client, domain, step, options.log);
    if (step === 'shutdown') memory.shutdowns.asked(uuid, Date.now());
    if (done) actions.push(done);
    now = await observe(client, domain);
  }
  const { observed } = now;
  const since = memory.shutdowns.sinceOf(uuid);
  if (since !== undefined && !isActive(observed.state)) {
    // The guest shut down (or was destroyed): the request is over.
    memory.shutdowns.forget(uuid);
    if (step !== 'destroy') actions.push('PoweredOff');
  }
  const waiting = since !== undefined && isActive(observed.state);
  const shutdownNote = waiting ? noteOf(since, Date.now(), 'the domain is destroyed') : undefined;
  return { state: 'Done', seen: { ...now, ...(shutdownNote ? { shutdownNote } : {}) }, actions };
}

/** Runs the step; the action to report, if it completed one. A race (someone else changed the state first) is left to the next read. */
async function applyPowerStep(client: LibvirtClient, domain: Domain, step: Exclude<PowerStep, 'none'>, log: Logger): Promise<MachineAction | undefined> {
  try {
    switch (step) {
      case 'start':
        await client.domains.start(domain);
        return 'PoweredOn';
      case 'resume':
        await client.domains.resume(domain);
        return 'PoweredOn';
      case 'shutdown':
        // 0: libvirt picks (the agent when it answers, else the ACPI power button).
        await client.domains.shutdown(domain, 0);
        log.info({ domain: domain.name }, 'Asked the guest to shut down');
        return undefined;
      case 'destroy':
        await client.domains.destroy(domain);
        return 'PoweredOff';
      case 'managedSave':
        await client.domains.managedSave(domain);
        return 'Suspended';
      case 'discardSave':
        await client.domains.managedSaveRemove(domain);
        return 'PoweredOff';
    }
  } catch (err) {
    // VIR_ERR_OPERATION_INVALID: "domain is not running" / "already running".
    if (isLibvirtError(err, ErrorCode.OPERATION_INVALID)) return undefined;
    throw err;
  }
}

/**
 * CPUs and memory of the persistent definition, set while the domain is off
 * (maximum and current, in the order that keeps current ≤ maximum); a running
 * domain keeps its size until it is off, and pending says so.
 */
async function convergeHardware(client: LibvirtClient, domain: Owned<Domain>, seen: Seen, spec: LibvirtMachineSpec): Promise<Step<Seen>> {
  const info = seen.size;
  const memoryKiB = spec.memoryMiB * 1024;
  const cpusDiffer = info.vcpus !== spec.vcpus;
  const memoryDiffers = info.maxMemoryKiB !== memoryKiB;
  if (!cpusDiffer && !memoryDiffers) return { state: 'Done', seen };
  const change = [cpusDiffer ? `${spec.vcpus} vCPUs` : '', memoryDiffers ? `${spec.memoryMiB} MiB` : ''].filter(Boolean).join(', ');
  if (isActive(seen.observed.state) || seen.observed.managedSave)
    return { state: 'Done', seen, pending: `CPU/memory change (${change}) applies once the domain is powered off` };
  const config = AffectFlags.Config;
  if (cpusDiffer) {
    const order = spec.vcpus > info.vcpus ? [config | MAXIMUM_FLAG, config] : [config, config | MAXIMUM_FLAG];
    for (const flags of order) await client.domains.setVcpus(domain, spec.vcpus, flags);
  }
  if (memoryDiffers) {
    const order = memoryKiB > info.maxMemoryKiB ? [config | MAXIMUM_FLAG, config] : [config, config | MAXIMUM_FLAG];
    for (const flags of order) await client.domains.setMemory(domain, memoryKiB, flags);
  }
  return { state: 'Done', seen, actions: ['Reconfigured'] };
}
