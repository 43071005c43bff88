// A machine's addresses (pure): the static ones of its spec when every NIC has
// one (the guest applies them from the seed's network-config), else what the
// host's neighbour table says for the NICs' MACs on their bridges: complete
// entries only, link-local addresses left out.
import type { MachineAddress } from '../../../../infra/api/machine-fields.js';
import type { Neighbour } from '../host/ip-links.js';
import { internalAddresses } from '../../machine-addresses.js';

export interface AddressNic {
  readonly mac: string;
  /** The bridge the NIC's tap is on: a neighbour entry counts only there. */
  readonly bridge: string;
  readonly staticAddress?: string;
}

export interface Addresses {
  readonly addresses: MachineAddress[];
  readonly source: 'static' | 'neighbour';
}

// FAILED and INCOMPLETE entries name an address nobody answered for.
const UNUSABLE = new Set(['FAILED', 'INCOMPLETE', 'NOARP']);

/** True when no neighbour lookup is needed: every NIC has a static address. */
export function isStaticOnly(nics: readonly AddressNic[]): boolean {
  return nics.length > 0 && nics.every((nic) => nic.staticAddress !== undefined);
}

export function toAddresses(nics: readonly AddressNic[], neighbours: readonly Neighbour[]): Addresses {
  if (isStaticOnly(nics)) return { addresses: internalAddresses(nics.map((nic) => nic.staticAddress)), source: 'static' };
  const found = nics.flatMap((nic) => {
    if (nic.staticAddress !== undefined) return [nic.staticAddress];
    return neighbours.filter((n) => n.mac === nic.mac.toLowerCase() && n.device === nic.bridge && !n.state.some((s) => UNUSABLE.has(s))).map((n) => n.address);
  });
  return { addresses: internalAddresses(found), source: 'neighbour' };
}
