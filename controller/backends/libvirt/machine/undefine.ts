// Deleting a LibvirtMachine's domain, once the machine recipe found it by UUID and mark: a
// running one destroyed, undefined with whatever of NVRAM, managed save, snapshot and
// checkpoint metadata the driver supports, checked gone; then its volumes deleted, every one
// named by its UUID (the domain's mark proves the UUID this machine's). Without a domain (a
// crash before the definition, a domain undefined by hand) nothing proves the UUID this
// machine's, since a spec.providerID can name any: only volumes whose names carry this
// machine's mark are deleted (volumes.ts), and any other with the UUID is left, said in the log.
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import { UndefineFlags } from '../client/constants.js';
import type { Domain, StoragePool } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { isActive } from './power.js';
import { deleteVolumesNamed, uuidPrefix, volumePrefix, volumesNamed } from './volumes.js';

type Request = MachineRequest<LibvirtMachineSpec>;

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

export async function undefineDomain(client: LibvirtClient, domain: Domain, request: Request, options: DestroyOptions): Promise<DestroyResult> {
  const { state } = await client.domains.state(domain);
  if (isActive(state)) await destroyRunning(client, domain);
  try {
    await undefine(client, domain);
  } catch (err) {
    if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
  }
  if (await lookup(client, request.uuid))
    throw new BackendError(BackendErrorKind.Rejected, `domain ${domain.name} (UUID ${request.uuid}) is still defined after its undefine`);
  options.log.info({ domain: domain.name, uuid: request.uuid }, 'Undefined the domain');
  const pool = await lookupPoolIfAny(client, request.spec.pool);
  const deleted = pool ? await deleteVolumesNamed(client, pool, uuidPrefix(request.uuid)) : [];
  if (deleted.length > 0) options.log.info({ uuid: request.uuid, volumes: deleted }, 'Deleted the volumes');
  return { state: 'Gone', existed: true };
}

/**
 * No domain has the UUID: the volumes of this machine's a crash before the definition left (its
 * mark in their names). Others with the UUID may be another machine's: they stay, and the log says so.
 */
export async function deleteVolumes(client: LibvirtClient, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  const pool = await lookupPoolIfAny(client, request.spec.pool);
  if (!pool) return { state: 'Gone', existed: false };
  const deleted = await deleteVolumesNamed(client, pool, volumePrefix(request));
  if (deleted.length > 0) log.info({ uuid: request.uuid, volumes: deleted }, 'Deleted the volumes');
  const left = (await volumesNamed(client, pool, uuidPrefix(request.uuid))).map((v) => v.name);
  if (left.length > 0)
    log.warn(
      { uuid: request.uuid, pool: pool.name, volumes: left },
      "Left volumes with the machine's UUID that carry no mark of this machine (another machine's, or made before volumes were marked): delete them by hand if they are this machine's",
    );
  return { state: 'Gone', existed: false };
}

async function destroyRunning(client: LibvirtClient, domain: Domain): Promise<void> {
  try {
    await client.domains.destroy(domain);
  } catch (err) {
    // VIR_ERR_OPERATION_INVALID: "domain is not running" (it stopped meanwhile).
    if (!isLibvirtError(err, ErrorCode.OPERATION_INVALID)) throw err;
  }
}

async function undefine(client: LibvirtClient, domain: Domain): Promise<void> {
  for (const [i, flags] of UNDEFINE_ATTEMPTS.entries()) {
    try {
      await client.domains.undefine(domain, flags);
      return;
    } catch (err) {
      // virCheckFlags: VIR_ERR_INVALID_ARG "unsupported flags (0x…)".
      const unsupported =
        isLibvirtError(err, ErrorCode.INVALID_ARG) || isLibvirtError(err, ErrorCode.NO_SUPPORT) || isLibvirtError(err, ErrorCode.ARGUMENT_UNSUPPORTED);
      if (!unsupported || i === UNDEFINE_ATTEMPTS.length - 1) throw err;
    }
  }
}

/** The domain with this UUID, or undefined. */
export async function lookup(client: LibvirtClient, uuid: string): Promise<Domain | undefined> {
  try {
    return await client.domains.lookupByUuid(uuid);
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
    throw err;
  }
}

async function lookupPoolIfAny(client: LibvirtClient, name: string): Promise<StoragePool | undefined> {
  try {
    return await client.pools.lookupByName(name);
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return undefined;
    throw err;
  }
}
