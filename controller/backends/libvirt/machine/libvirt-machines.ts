// LibvirtMachine on a libvirt host. Every pass starts by looking the domain up
// by the machine's UUID (its <uuid>), never by name: a domain an earlier pass
// defined (before a crash, before its status write) is found again and
// adopted when its <metadata> carries this machine's mark, never defined
// twice. A missing domain is made in one pass, each step quick and
// idempotent: its volumes (named after the UUID, so a retry finds them), the
// NoCloud seed (written before the first boot, never after), the definition,
// the start. Power follows spec.desiredPowerState (power.ts), CPUs and memory
// follow the spec while the domain is off, addresses come from libvirt's
// sources (addresses.ts). Deleting destroys the domain, undefines it with
// whatever of NVRAM, managed save, snapshot and checkpoint metadata the
// driver supports, deletes its volumes and checks that all are gone. Releasing
// (deletionPolicy Retain) only swaps the mark in its <metadata>: the domain
// runs on with its volumes.
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { Connection, DestroyOptions, DestroyResult, EnsureOptions, EnsureResult, MachineAction, MachineBackend, MachineRequest } from '../../backend.js';
import { withSignal } from '../../cancellation.js';
import { assertOwnedBy, ownerMark, releaseVm, type ReleasableVm } from '../../ownership.js';
import type { Logger } from '../../../runtime/log.js';
import { AffectFlags, DomainState, MAXIMUM_FLAG, UndefineFlags } from '../client/constants.js';
import type { Domain, StoragePool } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { RawKey, type DomainType } from '../mapping.js';
import { defaultDomainName } from '../domain-name.js';
import type { LibvirtSessionPool } from '../session-pool.js';
import { readAddresses, type AddressSourceName } from './addresses.js';
import { consoleLogPath, marksOf, ownerMarkOf, releasedMetadataXml, toDomainXml } from './domain-xml.js';
import { macOf } from './mac-address.js';
import { decidePowerStep, isActive, SHUTDOWN_GRACE_MS, toPowerState, type ObservedPower, type PowerStep } from './power.js';
import { toSeedImage } from '../../cloud-init/nocloud-seed.js';
import { deleteMachineVolumes, ensureDisks, imageFacts, lookupPool, parseVolumeRef, writeSeed } from './volumes.js';

type Request = MachineRequest<LibvirtMachineSpec>;

/** What the backend remembers between passes, per machine UUID; losing it (a restart) costs a little time, never correctness. */
interface MachineMemory {
  /** When this provider asked the guest to shut down (power.ts: the grace period runs from here). */
  readonly shutdownSince: Map<string, number>;
  /** The address source that answered last. */
  readonly addressSource: Map<string, AddressSourceName>;
}

export function libvirtMachines(sessions: LibvirtSessionPool): MachineBackend<LibvirtMachineSpec> {
  const memory: MachineMemory = { shutdownSince: new Map(), addressSource: new Map() };
  return {
    ensure: (connection: Connection, request: Request, options: EnsureOptions) =>
      withSignal(options.signal, () => sessions.use(connection, (client) => ensure(client, memory, request, options))),
    destroy: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () =>
        sessions.use(connection, async (client) => {
          const result = await destroy(client, request, options);
          memory.shutdownSince.delete(request.uuid);
          memory.addressSource.delete(request.uuid);
          return result;
        }),
      ),
    release: (connection: Connection, request: Request, options: DestroyOptions) =>
      withSignal(options.signal, () =>
        sessions.use(connection, async (client) => {
          const result = await releaseVm(request, await releasable(client, request), options.log);
          memory.shutdownSince.delete(request.uuid);
          memory.addressSource.delete(request.uuid);
          return result;
        }),
      ),
  };
}

async function ensure(client: LibvirtClient, memory: MachineMemory, request: Request, options: EnsureOptions): Promise<EnsureResult> {
  const actions: MachineAction[] = [];
  let domain = await findDomain(client, request.uuid);
  if (!domain) {
    if (!options.mayCreate) return { state: 'Absent' };
    domain = await create(client, request, options.log);
    actions.push('Created', 'GuestDataWritten');
  } else if (options.firstBoot) {
    // Not defined by this pass: only with our mark (a providerID can be copied).
    await assertOwned(client, domain, request);
    actions.push('Adopted');
  }
  const desired = request.spec.desiredPowerState ?? 'PoweredOn';
  // A shutdown asked for earlier no longer counts once the spec wants the domain on (or saved).
  if (desired !== 'PoweredOff') memory.shutdownSince.delete(request.uuid);
  let observed = await observePower(client, domain);
  // CPUs and memory change while the domain is off: before powering it on, or after powering it off.
  const resize = (): Promise<string | undefined> =>
    options.specChanged && !actions.includes('Created') ? convergeHardware(client, domain, request.spec, observed, actions) : Promise.resolve(undefined);
  const offBefore = !isActive(observed.state);
  let hardwareNote = offBefore ? await resize() : undefined;
  const step = decidePowerStep(observed, desired, memory.shutdownSince.get(request.uuid), Date.now());
  if (step !== 'none') {
    const done = await applyPowerStep(client, domain, step, options.log);
    if (step === 'shutdown') memory.shutdownSince.set(request.uuid, Date.now());
    if (done) actions.push(done);
    observed = await observePower(client, domain);
  }
  if (!offBefore) hardwareNote = await resize();
  const notes = hardwareNote ? [hardwareNote] : [];
  const power = toPowerState(observed);
  const since = memory.shutdownSince.get(request.uuid);
  if (since !== undefined && !isActive(observed.state)) {
    // The guest shut down (or was destroyed): the request is over.
    memory.shutdownSince.delete(request.uuid);
    if (step !== 'destroy') actions.push('PoweredOff');
  } else if (since !== undefined) {
    notes.push(`the guest was asked to shut down; the domain is destroyed if it still runs ${Math.round((since + SHUTDOWN_GRACE_MS - Date.now()) / 1000)} s from now`);
  }
  const macs = (request.spec.network ?? []).map((nic) => macOf(request.uuid, nic));
  const found = power === 'PoweredOn' ? await readAddresses(client, domain, macs, memory.addressSource.get(request.uuid)) : { addresses: [], source: undefined };
  if (found.source) memory.addressSource.set(request.uuid, found.source);
  return {
    state: 'Present',
    observation: {
      ref: domain.name,
      powerState: power,
      addresses: found.addresses,
      ...(macs.length === 0 ? { withoutNetwork: true } : {}),
      actions,
      statusFields: { domainUuid: domain.uuid, ...(found.source ? { addressSource: found.source } : {}) },
      ...(notes.length > 0 ? { pending: notes.join('; ') } : {}),
    },
  };
}

/** The domain with this UUID, or undefined. */
async function findDomain(client: LibvirtClient, uuid: string): Promise<Domain | undefined> {
  try {
    return await client.domains.lookupByUuid(uuid);
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
    throw err;
  }
}

/** Volumes, seed, definition: each step safe to run again after a crash. Returns the defined (not started) domain. */
async function create(client: LibvirtClient, request: Request, log: Logger): Promise<Domain> {
  const { spec, uuid } = request;
  const name = spec.domainName ?? defaultDomainName(request.namespace, request.name);
  const pool = await lookupPool(client, spec.pool);
  const source = parseVolumeRef(spec.bootSource.volume, spec.pool);
  const image = await imageFacts(client, source, 'spec.bootSource.volume');
  const disks = await ensureDisks(client, pool, uuid, spec, spec.bootSource.kind === 'backingVolume' ? image : undefined);
  const nics = (spec.network ?? []).map((nic) => ({ kind: nic.source.kind, source: nic.source.name, mac: macOf(uuid, nic), model: nic.model ?? 'virtio' }));
  const seedImage = toSeedImage({
    uuid,
    hostname: request.name,
    providerID: request.providerID,
    userData: request.userData,
    nics: (spec.network ?? []).map((nic, i) => ({ name: nic.name, mac: nics[i]?.mac ?? '', ipam: nic.ipam })),
    nicsField: 'spec.network',
  });
  const seed = await writeSeed(client, pool, uuid, seedImage, async () => {
    // libvirt's test driver has no volume streams, and no guest that would read the seed.
    const tolerated = (await client.host.hypervisorType()).toUpperCase() === 'TEST';
    if (tolerated) log.info({ uuid }, 'The test driver takes no volume uploads: the seed volume stays empty');
    return tolerated;
  });
  const xml = toDomainXml({
    type: (request.raw[RawKey.DomainType] as DomainType | undefined) ?? 'kvm',
    name,
    uuid,
    owner: ownerMark(request.owner),
    vcpus: spec.vcpus,
    memoryMiB: spec.memoryMiB,
    firmware: spec.firmware ?? 'bios',
    machineType: spec.machineType,
    disks,
    installMedia: spec.bootSource.kind === 'installMedia' ? source : undefined,
    seed,
    nics,
    consoleLog: consoleLogPath(name),
  });
  log.info({ uuid, domain: name }, 'Defining the domain');
  const domain = await client.domains.define(xml);
  log.info({ uuid, domain: name }, 'Defined the domain');
  return domain;
}

/** Throws NotOwned unless the domain's <metadata> carries this machine's mark (one XML read). */
async function assertOwned(client: LibvirtClient, domain: Domain, request: Request): Promise<void> {
  assertOwnedBy(request.owner, request.uuid, ownerMarkOf(await client.domains.xmlDesc(domain)));
}

async function observePower(client: LibvirtClient, domain: Domain): Promise<ObservedPower> {
  const { state } = await client.domains.state(domain);
  // Only a shut-off domain may hold a managed save image (a suspend).
  const managedSave = state === DomainState.Shutoff ? await client.domains.hasManagedSaveImage(domain) : false;
  return { state, managedSave };
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
 * domain keeps its size until it is off, and the returned note says so.
 */
async function convergeHardware(client: LibvirtClient, domain: Domain, spec: LibvirtMachineSpec, observed: ObservedPower, actions: MachineAction[]): Promise<string | undefined> {
  const info = await client.domains.info(domain);
  const memoryKiB = spec.memoryMiB * 1024;
  const cpusDiffer = info.vcpus !== spec.vcpus;
  const memoryDiffers = info.maxMemoryKiB !== memoryKiB;
  if (!cpusDiffer && !memoryDiffers) return undefined;
  const change = [cpusDiffer ? `${spec.vcpus} vCPUs` : '', memoryDiffers ? `${spec.memoryMiB} MiB` : ''].filter(Boolean).join(', ');
  if (isActive(observed.state) || observed.managedSave) return `CPU/memory change (${change}) applies once the domain is powered off`;
  const config = AffectFlags.Config;
  if (cpusDiffer) {
    const order = spec.vcpus > info.vcpus ? [config | MAXIMUM_FLAG, config] : [config, config | MAXIMUM_FLAG];
    for (const flags of order) await client.domains.setVcpus(domain, spec.vcpus, flags);
  }
  if (memoryDiffers) {
    const order = memoryKiB > info.maxMemoryKiB ? [config | MAXIMUM_FLAG, config] : [config, config | MAXIMUM_FLAG];
    for (const flags of order) await client.domains.setMemory(domain, memoryKiB, flags);
  }
  actions.push('Reconfigured');
  return undefined;
}

/**
 * Undefine flags, most first: what a QEMU domain may hold (NVRAM, a TPM's
 * state, a managed save, snapshot and checkpoint metadata); a driver refusing
 * a flag it does not know (libvirt's test driver: NVRAM, TPM, checkpoints) is
 * asked again with fewer.
 */
const UNDEFINE_ATTEMPTS = [
  UndefineFlags.ManagedSave | UndefineFlags.SnapshotsMetadata | UndefineFlags.CheckpointsMetadata | UndefineFlags.Nvram | UndefineFlags.Tpm,
  UndefineFlags.ManagedSave | UndefineFlags.SnapshotsMetadata | UndefineFlags.Nvram,
  UndefineFlags.ManagedSave | UndefineFlags.SnapshotsMetadata,
  0,
] as const;

async function undefine(client: LibvirtClient, domain: Domain): Promise<void> {
  for (const [i, flags] of UNDEFINE_ATTEMPTS.entries()) {
    try {
      await client.domains.undefine(domain, flags);
      return;
    } catch (err) {
      // virCheckFlags: VIR_ERR_INVALID_ARG "unsupported flags (0x…)".
      const unsupported = isLibvirtError(err, ErrorCode.INVALID_ARG) || isLibvirtError(err, ErrorCode.NO_SUPPORT) || isLibvirtError(err, ErrorCode.ARGUMENT_UNSUPPORTED);
      if (!unsupported || i === UNDEFINE_ATTEMPTS.length - 1) throw err;
    }
  }
}

async function destroy(client: LibvirtClient, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  const domain = await findDomain(client, request.uuid);
  if (domain) {
    await assertOwned(client, domain, request);
    const { state } = await client.domains.state(domain);
    if (isActive(state)) await applyPowerStep(client, domain, 'destroy', log);
    try {
      await undefine(client, domain);
    } catch (err) {
      if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
    }
    if (await findDomain(client, request.uuid)) throw new BackendError(BackendErrorKind.Rejected, `domain ${domain.name} (UUID ${request.uuid}) is still defined after its undefine`);
    log.info({ domain: domain.name, uuid: request.uuid }, 'Undefined the domain');
  }
  // Volumes go even without a domain: a crash before the definition leaves them behind.
  const pool = await lookupPoolIfAny(client, request.spec.pool);
  const deleted = pool ? await deleteMachineVolumes(client, pool, request.uuid) : [];
  if (deleted.length > 0) log.info({ uuid: request.uuid, volumes: deleted }, 'Deleted the volumes');
  return { state: 'Gone', existed: domain !== undefined };
}

/** The domain with its marks; defined in one pass (no task to wait for), so absent or present. */
async function releasable(client: LibvirtClient, request: Request): Promise<ReleasableVm | { readonly state: 'Absent' }> {
  const domain = await findDomain(client, request.uuid);
  if (!domain) return { state: 'Absent' };
  return {
    ref: domain.name,
    marks: marksOf(await client.domains.xmlDesc(domain)),
    unmark: async (releasedFrom) => {
      // The persistent definition, and the running domain too when it runs (it may be defined again from either).
      const { state } = await client.domains.state(domain);
      const flags = isActive(state) ? AffectFlags.Live | AffectFlags.Config : AffectFlags.Config;
      await client.domains.setMetadataElement(domain, releasedMetadataXml(releasedFrom), flags);
    },
  };
}

async function lookupPoolIfAny(client: LibvirtClient, name: string): Promise<StoragePool | undefined> {
  try {
    return await client.pools.lookupByName(name);
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
    throw err;
  }
}
