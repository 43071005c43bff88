// status.addresses of a ProxmoxMachine (pure): the static addresses of its
// spec, or what the QEMU guest agent reports, without loopback and link-local.
import type { MachineAddress } from '../../../../infra/api/machine-fields.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { GuestInterface } from '../client/wire-types.js';
import { ownNicAddresses } from '../../machine-addresses.js';

export type AddressSource = 'static' | 'guestAgent';

/** The spec's static addresses, in NIC order; empty when every NIC uses DHCP. */
export function staticAddresses(spec: Pick<ProxmoxMachineSpec, 'nics'>): MachineAddress[] {
  return spec.nics.flatMap((nic) => (nic.ipam?.static ? [{ type: 'InternalIP' as const, address: nic.ipam.static.address.toLowerCase() }] : []));
}

/** The guest agent's addresses, first NIC first: those of the VM's own NICs (by MAC), else every interface's but `lo` (ownNicAddresses). */
export function agentAddresses(interfaces: readonly GuestInterface[], macs: readonly string[]): MachineAddress[] {
  const ours = new Set(macs.map((m) => m.toLowerCase()));
  const ipsOf = (list: readonly GuestInterface[]): string[] => list.flatMap((i) => (i['ip-addresses'] ?? []).map((a) => a['ip-address']));
  return ownNicAddresses(
    ipsOf(interfaces.filter((i) => ours.has(i['hardware-address']?.toLowerCase() ?? ''))),
    ipsOf(interfaces.filter((i) => i.name !== 'lo')),
  );
}
