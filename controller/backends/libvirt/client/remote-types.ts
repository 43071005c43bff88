// The shared types of libvirt's remote protocol (remote_protocol.x, v9.0.0):
// object handles and the error record. Names are the `.x` names; the unit
// test compares each layout with the file.
import { xdrFixedOpaque, xdrInt, xdrOptional, xdrString, xdrStruct, type XdrValue } from './xdr-schema.js';

/** REMOTE_STRING_MAX: the bound of every string in the protocol. */
export const REMOTE_STRING_MAX = 4194304;
/** VIR_UUID_BUFLEN. */
export const UUID_BYTES = 16;

export const remoteNonnullString = xdrString(REMOTE_STRING_MAX);
export const remoteString = xdrOptional(remoteNonnullString);
export const remoteUuid = xdrFixedOpaque(UUID_BYTES);

export const remoteNonnullDomain = xdrStruct('remote_nonnull_domain', {
  name: remoteNonnullString,
  uuid: remoteUuid,
  id: xdrInt,
});

export const remoteNonnullNetwork = xdrStruct('remote_nonnull_network', {
  name: remoteNonnullString,
  uuid: remoteUuid,
});

export const remoteNonnullStoragePool = xdrStruct('remote_nonnull_storage_pool', {
  name: remoteNonnullString,
  uuid: remoteUuid,
});

export const remoteNonnullStorageVol = xdrStruct('remote_nonnull_storage_vol', {
  pool: remoteNonnullString,
  name: remoteNonnullString,
  key: remoteNonnullString,
});

/** A reply with status ERROR carries this (virNetMessageError has the same layout). */
export const remoteError = xdrStruct('remote_error', {
  code: xdrInt,
  domain: xdrInt,
  message: remoteString,
  level: xdrInt,
  dom: xdrOptional(remoteNonnullDomain),
  str1: remoteString,
  str2: remoteString,
  str3: remoteString,
  int1: xdrInt,
  int2: xdrInt,
  net: xdrOptional(remoteNonnullNetwork),
});

/** A domain handle as the daemon sends it: `id` is -1 while the domain is not running. */
export type DomainRef = XdrValue<typeof remoteNonnullDomain>;
export type NetworkRef = XdrValue<typeof remoteNonnullNetwork>;
export type StoragePoolRef = XdrValue<typeof remoteNonnullStoragePool>;
/** A volume handle: its pool's name, its own name and its key (usually the path). */
export type StorageVolRef = XdrValue<typeof remoteNonnullStorageVol>;
export type RemoteError = XdrValue<typeof remoteError>;
