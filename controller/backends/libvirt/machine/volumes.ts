// The volumes of a LibvirtMachine, all in spec.pool and all named after its
// UUID and its mark (`<uuid>-<mark>-<disk>.qcow2`, `<uuid>-<mark>-cidata.iso`;
// the mark a hash of the machine's ownership mark, so it survives `clusterctl
// move` as that does): a pass after a crash finds the ones an earlier pass
// made, and a deletion finds every one of them, even those of a domain that was
// never defined. A volume carries no other mark (libvirt keeps no metadata on
// volumes), so its name is the proof: without a domain of this machine's, only
// volumes with this machine's mark in their name are deleted, never those of a
// machine whose UUID a spec.providerID merely names. The OS disk is a qcow2
// overlay on the image's volume (only the overlay's own writes take space; the
// image is never written); the other disks start blank; the seed is a raw
// volume the NoCloud ISO is uploaded into.
import { createHash } from 'node:crypto';
import type { LibvirtMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { BackendError, BackendErrorKind, isBackendError } from '../../backend-error.js';
import type { MachineRequest } from '../../backend.js';
import { ownerMark } from '../../ownership.js';
import type { StoragePool, StorageVol } from '../client/handles.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from '../client/libvirt-error.js';
import { toVolumeXml, volumeFactsOf, type DomainDisk, type VolumeFacts, type VolumeRef } from './domain-xml.js';

const GIB = 1024 ** 3;
/** Hex digits of the mark's hash in a volume name: 80 bits, beyond a search for another name with the same mark. */
const MARK_HEX = 20;

/** Whose volumes: the machine's UUID and its ownership mark. */
export type VolumeOwner = Pick<MachineRequest<unknown>, 'uuid' | 'owner'>;

/** The prefix of every volume with this UUID, whoever made it (only a domain with this machine's mark proves them its). */
export function uuidPrefix(uuid: string): string {
  return `${uuid.toLowerCase()}-`;
}

/** The prefix of every volume this machine makes: its UUID, then the hash of its ownership mark. */
export function volumePrefix({ uuid, owner }: VolumeOwner): string {
  const mark = createHash('sha256').update(ownerMark(owner)).digest('hex').slice(0, MARK_HEX);
  return `${uuidPrefix(uuid)}${mark}-`;
}

export function diskVolumeName(machine: VolumeOwner, disk: string): string {
  return `${volumePrefix(machine)}${disk}.qcow2`;
}

export function seedVolumeName(machine: VolumeOwner): string {
  return `${volumePrefix(machine)}cidata.iso`;
}

/** `pool/volume`, or a volume of `defaultPool` (bootSource.volume, a VMImage row's resolvedRef). */
export function parseVolumeRef(ref: string, defaultPool: string): VolumeRef {
  const slash = ref.indexOf('/');
  return slash < 0 ? { pool: defaultPool, volume: ref } : { pool: ref.slice(0, slash), volume: ref.slice(slash + 1) };
}

/** A volume named as a machine's are (`<uuid>-…`): another machine's disk or seed, whoever's. */
const MACHINE_VOLUME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-/i;

/**
 * Throws Rejected when `ref` is a machine's volume: an overlay on it would boot a copy of
 * another machine's disk (its data, its keys) with this machine's user-data. Images only.
 */
export function assertImageVolume(ref: VolumeRef, field: string): void {
  if (MACHINE_VOLUME.test(ref.volume)) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `${field}: "${ref.volume}" is named as a machine's disk is: a machine starts from an image volume, never from another machine's`,
    );
  }
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
  machine: VolumeOwner,
  spec: LibvirtMachineSpec,
  image: VolumeFacts | undefined,
): Promise<DomainDisk[]> {
  const disks: DomainDisk[] = [];
  for (const [i, disk] of spec.disks.entries()) {
    const name = diskVolumeName(machine, disk.name);
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
  machine: VolumeOwner,
  image: Buffer,
  tolerateNoUpload: () => Promise<boolean>,
): Promise<VolumeRef> {
  const name = seedVolumeName(machine);
  await deleteIfPresent(client, pool, name);
  const volume = await client.volumes.create(pool, toVolumeXml(name, image.length, 'raw'));
  try {
    await client.volumes.upload(volume, image);
  } catch (err) {
    if (!(isLibvirtError(err, ErrorCode.NO_SUPPORT) && (await tolerateNoUpload()))) throw err;
  }
  return { pool: pool.name, volume: name };
}

/** The volumes in `pool` whose names start with `prefix`. */
export async function volumesNamed(client: LibvirtClient, pool: StoragePool, prefix: string): Promise<StorageVol[]> {
  return (await client.pools.listVolumes(pool)).filter((v) => v.name.startsWith(prefix));
}

/** Deletes every volume in `pool` whose name starts with `prefix` and checks that none is left. */
export async function deleteVolumesNamed(client: LibvirtClient, pool: StoragePool, prefix: string): Promise<string[]> {
  const volumes = await volumesNamed(client, pool, prefix);
  for (const volume of volumes) {
    try {
      await client.volumes.delete(volume);
    } catch (err) {
      if (!isBackendError(err, BackendErrorKind.NotFound)) throw err;
    }
  }
  const left = await volumesNamed(client, pool, prefix);
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
