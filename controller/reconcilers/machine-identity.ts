// A backend VM's identity, derived from the VirtualMachine's object UID so it is
// known before anything is created (docs/adr/0005-vm-identity-in-spec.md,
// DESIGN §3). The provider role stamps the same value into spec.providerID
// before it creates the VM, and the controller offers it to the guest as
// ${PROVIDER_ID}; both must call this module.
import { createHash } from 'node:crypto';

/**
 * Namespace of banlieue machine UUIDs: the RFC 4122 v5 UUID of the name
 * "banlieue.io" in the DNS namespace (6ba7b810-9dad-11d1-80b4-00c04fd430c8),
 * i.e. Python's `uuid.uuid5(uuid.NAMESPACE_DNS, 'banlieue.io')`.
 * Never change it: every providerID ever issued depends on it.
 */
export const MACHINE_UUID_NAMESPACE = 'f835eb91-161d-5b93-9c3f-a62bc78452de';

/** The UUID a VM is created with (BIOS / SMBIOS / domain UUID): v5 of the object UID. */
export function machineUuid(uid: string): string {
  return uuidV5(MACHINE_UUID_NAMESPACE, uid);
}

/** `<scheme>://<machineUuid(uid)>`, e.g. vsphere://74e4d702-bafd-5e07-8195-ab7a57a18b2a (the scheme: a backend's providerIDScheme). */
export function providerIdFor(scheme: string, uid: string): string {
  return `${scheme}://${machineUuid(uid)}`;
}

/** RFC 4122 §4.3 name-based UUID, version 5 (SHA-1), lower-case. */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  if (ns.length !== 16) throw new Error(`namespace "${namespace}" is not a UUID`);
  const bytes = createHash('sha1').update(ns).update(name, 'utf8').digest().subarray(0, 16);
  // readUInt8/writeUInt8 check the offset (a SHA-1 digest always has these bytes).
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x50, 6); // version 5
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8); // variant 10xx (RFC 4122)
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
