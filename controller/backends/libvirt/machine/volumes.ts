// The volumes of a LibvirtMachine, all in spec.pool and all named after its
// UUID (`<uuid>-<disk>.qcow2`, `<uuid>-cidata.iso`): a pass after a crash finds
// the ones an earlier pass made, and a deletion finds every one of them, even
// those of a domain that was never defined. The OS disk is a qcow2 overlay on
// the image's volume (only the overlay's own writes take space; the image is
// never written); the other disks start blank; the seed is a raw volume the
// NoCloud ISO is uploaded into.
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { StoragePool, StorageVol } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { toVolumeXml, volumeFactsOf, type DomainDisk, type VolumeFacts, type VolumeRef } from './domain-xml.js';

const GIB = 1024 ** 3;

/** The prefix of every volume of the machine with this UUID. */
export function volumePrefix(uuid: string): string {
  return `${uuid.toLowerCase()}-`;
}

export function diskVolumeName(uuid: string, disk: string): string {
  return `${volumePrefix(uuid)}${disk}.qcow2`;
}

export function seedVolumeName(uuid: string): string {
  return `${volumePrefix(uuid)}cidata.iso`;
}

/** `pool/volume`, or a volume of `defaultPool` (bootSource.volume, a VMImage row's resolvedRef). */
export function parseVolumeRef(ref: string, defaultPool: string): VolumeRef {
  const slash = ref.indexOf('/');
  return slash < 0 ? { pool: defaultPool, volume: ref } : { pool: ref.slice(0, slash), volume: ref.slice(slash + 1) };
}

export async function lookupPool(client: LibvirtClient, name: string): Promise<StoragePool> {
  try {
    return await client.pools.lookupByName(name);
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound))
      throw new BackendError(BackendErrorKind.Rejected, `storage pool "${name}" (spec.pool) does not exist on this host`, { cause: err });
    throw err;
  }
}

/** Path, format and size of the image volume; Rejected naming it when it is not there. */
export async function imageFacts(client: LibvirtClient, ref: VolumeRef, field: string): Promise<VolumeFacts> {
  try {
    const pool = await client.pools.lookupByName(ref.pool);
    return volumeFactsOf(await client.volumes.xmlDesc(await client.volumes.lookupByName(pool, ref.volume)));
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) {
      throw new BackendError(BackendErrorKind.Rejected, `${field}: no volume "${ref.volume}" in storage pool "${ref.pool}" on this host`, { cause: err });
    }
    throw err;
  }
}

/**
 * Creates the machine's disks (those an earlier pass made are kept) and
 * returns them as the domain names them: the OS disk first, an overlay on
 * `image` when given.
 */
export async function ensureDisks(
  client: LibvirtClient,
  pool: StoragePool,
  uuid: string,
  spec: LibvirtMachineSpec,
  image: VolumeFacts | undefined,
): Promise<DomainDisk[]> {
  const disks: DomainDisk[] = [];
  for (const [i, disk] of spec.disks.entries()) {
    const name = diskVolumeName(uuid, disk.name);
    const wanted = disk.sizeGiB * GIB;
    const overlay = i === 0 && image !== undefined;
    // An overlay is at least as large as its image.
    const capacity = overlay ? Math.max(wanted, image.capacityBytes) : wanted;
    await createOnce(client, pool, name, toVolumeXml(name, capacity, 'qcow2', overlay ? image : undefined));
    disks.push({ pool: pool.name, volume: name, format: 'qcow2', bus: disk.bus ?? 'virtio' });
  }
  return disks;
}

/**
 * Writes the seed ISO into a fresh volume (one left by an earlier pass is
 * replaced: the user-data may have changed since). `tolerateNoUpload`: the
 * host's driver has no volume streams (libvirt's test driver), so the volume
 * stays empty rather than failing the machine.
 */
export async function writeSeed(
  client: LibvirtClient,
  pool: StoragePool,
  uuid: string,
  image: Buffer,
  tolerateNoUpload: () => Promise<boolean>,
): Promise<VolumeRef> {
  const name = seedVolumeName(uuid);
  await deleteIfPresent(client, pool, name);
  const volume = await client.volumes.create(pool, toVolumeXml(name, image.length, 'raw'));
  try {
    await client.volumes.upload(volume, image);
  } catch (err) {
    if (!(isLibvirtError(err, ErrorCode.NO_SUPPORT) && (await tolerateNoUpload()))) throw err;
  }
  return { pool: pool.name, volume: name };
}

/** The machine's volumes in `pool` (by their UUID prefix). */
export async function machineVolumes(client: LibvirtClient, pool: StoragePool, uuid: string): Promise<StorageVol[]> {
  const prefix = volumePrefix(uuid);
  return (await client.pools.listVolumes(pool)).filter((v) => v.name.startsWith(prefix));
}

/** Deletes every volume of the machine in `pool` and checks that none is left. */
export async function deleteMachineVolumes(client: LibvirtClient, pool: StoragePool, uuid: string): Promise<string[]> {
  const volumes = await machineVolumes(client, pool, uuid);
  for (const volume of volumes) {
    try {
      await client.volumes.delete(volume);
    } catch (err) {
      if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
    }
  }
  const left = await machineVolumes(client, pool, uuid);
  if (left.length > 0)
    throw new BackendError(
      BackendErrorKind.Rejected,
      `volumes ${left.map((v) => v.name).join(', ')} are still in storage pool "${pool.name}" after their deletion`,
    );
  return volumes.map((v) => v.name);
}

async function createOnce(client: LibvirtClient, pool: StoragePool, name: string, xml: string): Promise<void> {
  try {
    await client.volumes.create(pool, xml);
  } catch (err) {
    // Made by an earlier pass that did not get as far as defining the domain? Drivers word that
    // differently (VIR_ERR_STORAGE_VOL_EXIST, or the test driver's OPERATION_FAILED): the volume tells.
    if (isLibvirtError(err) && (await exists(client, pool, name))) return;
    throw err;
  }
}

async function exists(client: LibvirtClient, pool: StoragePool, name: string): Promise<boolean> {
  try {
    await client.volumes.lookupByName(pool, name);
    return true;
  } catch (err) {
    if (isBackendError(err, BackendErrorKind.NotFound)) return false;
    throw err;
  }
}

async function deleteIfPresent(client: LibvirtClient, pool: StoragePool, name: string): Promise<void> {
  try {
    await client.volumes.delete(await client.volumes.lookupByName(pool, name));
  } catch (err) {
    if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
  }
}
