// Deleting a LibvirtMachine's domain, once the machine recipe found it by UUID and mark: a
// running one destroyed, undefined with whatever of NVRAM, managed save, snapshot and
// checkpoint metadata the driver supports, checked gone; then the machine's volumes (named by
// its UUID) deleted, which also runs without a domain (a crash before the definition).
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { DestroyOptions, DestroyResult, MachineRequest } from '../../backend.js';
import { UndefineFlags } from '../client/constants.js';
import type { Domain, StoragePool } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { isActive } from './power.js';
import { deleteMachineVolumes } from './volumes.js';

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
  await deleteVolumes(client, request, options);
  return { state: 'Gone', existed: true };
}

/** No domain has the UUID: the volumes a crash before the definition left, named by it. */
export async function deleteVolumes(client: LibvirtClient, request: Request, { log }: DestroyOptions): Promise<DestroyResult> {
  const pool = await lookupPoolIfAny(client, request.spec.pool);
  const deleted = pool ? await deleteMachineVolumes(client, pool, request.uuid) : [];
  if (deleted.length > 0) log.info({ uuid: request.uuid, volumes: deleted }, 'Deleted the volumes');
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
