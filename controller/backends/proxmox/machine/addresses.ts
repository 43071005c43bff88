// status.addresses of a ProxmoxMachine (pure): the static addresses of its
// spec, or what the QEMU guest agent reports, without loopback and link-local.
import type { MachineAddress } from '../../../../infra/api/common.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { GuestInterface } from '../client/wire-types.js';

export type AddressSource = 'static' | 'guestAgent';

/** The spec's static addresses, in NIC order; empty when every NIC uses DHCP. */
export function staticAddresses(spec: Pick<ProxmoxMachineSpec, 'nics'>): MachineAddress[] {
  return spec.nics.flatMap((nic) => (nic.ipam?.static ? [{ type: 'InternalIP' as const, address: nic.ipam.static.address.toLowerCase() }] : []));
}

const NOT_ROUTABLE = /^(fe[89ab][0-9a-f]:|169\.254\.|127\.|::1$|::ffff:127\.)/i;

/** The guest's addresses, first NIC first, each once; none from `lo`, loopback or link-local ranges. */
export function agentAddresses(interfaces: readonly GuestInterface[]): MachineAddress[] {
  const all = interfaces
    .filter((i) => i.name !== 'lo')
    .flatMap((i) => (i['ip-addresses'] ?? []).map((a) => a['ip-address'].toLowerCase()))
    .filter((ip) => !NOT_ROUTABLE.test(ip));
  return [...new Set(all)].map((address) => ({ type: 'InternalIP', address }));
}
