// A running domain's addresses, from libvirt's own sources
// (virDomainInterfaceAddresses): the DHCP leases of its libvirt networks, the
// guest agent where the guest runs one, then the host's ARP table (NICs on a
// bridge served by someone else's DHCP). The first source naming an address
// of one of the machine's MACs wins; loopback and link-local addresses are
// never reported. The source that answered last is asked first next time, so
// a converged machine costs one call.
import type { MachineAddress } from '../../../../infra/api/machine-fields.js';
import { AddressSource } from '../client/constants.js';
import type { Domain } from '../client/handles.js';
import type { InterfaceAddresses } from '../client/domains.js';
import type { LibvirtClient } from '../client/libvirt-client.js';
import { isLibvirtError } from '../client/libvirt-error.js';
import { internalAddresses } from '../../machine-addresses.js';

/** status.addressSource values. */
export type AddressSourceName = 'dhcpLease' | 'guestAgent' | 'arpTable';

const SOURCES: readonly { readonly name: AddressSourceName; readonly source: number }[] = [
  { name: 'dhcpLease', source: AddressSource.Lease },
  { name: 'guestAgent', source: AddressSource.Agent },
  { name: 'arpTable', source: AddressSource.Arp },
];

export interface FoundAddresses {
  readonly addresses: MachineAddress[];
  readonly source: AddressSourceName | undefined;
}

/** Asks each source in turn (`preferred` first); none answering is no address, not an error. */
export async function readAddresses(client: LibvirtClient, domain: Domain, macs: readonly string[], preferred?: AddressSourceName): Promise<FoundAddresses> {
  const order = [...SOURCES].sort((a, b) => Number(b.name === preferred) - Number(a.name === preferred));
  for (const { name, source } of order) {
    let interfaces: InterfaceAddresses[];
    try {
      interfaces = await client.domains.interfaceAddresses(domain, source);
    } catch (err) {
      // The daemon answered that this source cannot tell (no agent, no libvirt network): try the next.
      if (isLibvirtError(err)) continue;
      throw err;
    }
    const addresses = usableAddresses(interfaces, macs);
    if (addresses.length > 0) return { addresses, source: name };
  }
  return { addresses: [], source: undefined };
}

/** Addresses of the machine's NICs (by MAC, where the source names one), without loopback and link-local ones. */
export function usableAddresses(interfaces: readonly InterfaceAddresses[], macs: readonly string[]): MachineAddress[] {
  const ours = new Set(macs.map((m) => m.toLowerCase()));
  return internalAddresses(interfaces.filter((i) => i.mac === undefined || ours.has(i.mac.toLowerCase())).flatMap((i) => i.addresses.map((a) => a.address)));
}
