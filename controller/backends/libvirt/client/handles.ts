// The handles callers hold: wire handles with the UUID as a string. The
// daemon finds an object by the UUID of its handle (the name is carried along),
// so a handle stays valid across reconnects and daemon restarts.
import { UUID_BYTES, type DomainRef, type NetworkRef, type StoragePoolRef } from './remote-types.js';

export interface Domain {
  readonly name: string;
  /** Lower-case, with dashes. */
  readonly uuid: string;
  /** The running domain's id; -1 while it is not running. */
  readonly id: number;
}

export interface Network {
  readonly name: string;
  readonly uuid: string;
}

export interface StoragePool {
  readonly name: string;
  readonly uuid: string;
}

export { type StorageVolRef as StorageVol } from './remote-types.js';

const UUID_PATTERN = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export function uuidToBytes(uuid: string): Buffer {
  if (!UUID_PATTERN.test(uuid)) throw new TypeError(`"${uuid}" is not a UUID`);
  const bytes = Buffer.from(uuid.replaceAll('-', ''), 'hex');
  if (bytes.length !== UUID_BYTES) throw new TypeError(`"${uuid}" is not a UUID`);
  return bytes;
}

export function uuidFromBytes(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const toDomain = (ref: DomainRef): Domain => ({ name: ref.name, uuid: uuidFromBytes(ref.uuid), id: ref.id });
export const fromDomain = (domain: Domain): DomainRef => ({ name: domain.name, uuid: uuidToBytes(domain.uuid), id: domain.id });
export const toNamed = (ref: NetworkRef | StoragePoolRef): Network & StoragePool => ({ name: ref.name, uuid: uuidFromBytes(ref.uuid) });
export const fromNamed = (handle: Network | StoragePool): NetworkRef & StoragePoolRef => ({ name: handle.name, uuid: uuidToBytes(handle.uuid) });
