// MACs of a machine's NICs (pure): the spec's, else derived from the machine's
// UUID and the NIC's name, in Proxmox's own OUI BC:24:11 (what PVE gives a NIC
// without one). Derived, not random, so the seed's network-config (written
// before the first boot, matching NICs by MAC) and a re-created config agree,
// and a crash between the two changes nothing.
import { derivedMac as macFrom } from '../../derived-mac.js';

const PROXMOX_OUI = 'bc:24:11';

export function derivedMac(uuid: string, nicName: string): string {
  return macFrom(PROXMOX_OUI, `${uuid.toLowerCase()}/${nicName}`);
}

/** The MAC of a NIC: the fixed one, or derived. Lower-case. */
export function macOf(uuid: string, nic: { readonly name: string; readonly macAddress?: string }): string {
  return (nic.macAddress ?? derivedMac(uuid, nic.name)).toLowerCase();
}
