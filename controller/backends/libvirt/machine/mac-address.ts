// MACs of a machine's NICs (pure): the spec's, else derived from the machine's
// UUID and the NIC's name. Derived, not left to libvirt's random choice, so the
// seed's network-config (written before the domain exists, matching NICs by
// MAC) and the domain agree, a domain defined again after a crash gets the
// same MACs, and the guest keeps its DHCP lease. A locally administered
// unicast address (`02:…`) with 40 bits of hash: two NICs of one host meet
// by chance about once in a trillion pairs, against once in 16 million for
// libvirt's own `52:54:00` + 24 random bits.
import { derivedMac as macFrom } from '../../derived-mac.js';

export function derivedMac(uuid: string, nicName: string): string {
  return macFrom('02', `${uuid.toLowerCase()}/${nicName}`);
}

/** The MAC of a NIC: the spec's (lower-cased), or derived. */
export function macOf(uuid: string, nic: { readonly name: string; readonly macAddress?: string }): string {
  return (nic.macAddress ?? derivedMac(uuid, nic.name)).toLowerCase();
}
