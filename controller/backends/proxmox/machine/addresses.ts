// status.addresses of a ProxmoxMachine (pure): the static addresses of its
// spec, or what the QEMU guest agent reports, without loopback and link-local.
import type { MachineAddress } from '../../../../infra/api/common.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { GuestInterface } from '../client/wire-types.js';
import { internalAddresses } from '../../machine-addresses.js';

export type AddressSource = 'static' | 'guestAgent';

/** The spec's static addresses, in NIC order; empty when every NIC uses DHCP. */
export function staticAddresses(spec: Pick<ProxmoxMachineSpec, 'nics'>): MachineAddress[] {
  return spec.nics.flatMap((nic) => (nic.ipam?.static ? [{ type: 'InternalIP' as const, address: nic.ipam.static.address.toLowerCase() }] : []));
}

/**
 * The guest's addresses, first NIC first, each once; none from loopback or
 * link-local ranges. Those of the VM's own NICs (by MAC) when they have any: a
 * Kubernetes node's agent also reports kube-ipvs0 (every Service IP), CNI
 * bridges and docker0. Otherwise every interface's but `lo` (the IP on a guest bridge).
 */
export function agentAddresses(interfaces: readonly GuestInterface[], macs: readonly string[]): MachineAddress[] {
  const ours = new Set(macs.map((m) => m.toLowerCase()));
  const ipsOf = (list: readonly GuestInterface[]): string[] => list.flatMap((i) => (i['ip-addresses'] ?? []).map((a) => a['ip-address']));
  const own = internalAddresses(ipsOf(interfaces.filter((i) => ours.has(i['hardware-address']?.toLowerCase() ?? ''))));
  return own.length > 0 ? own : internalAddresses(ipsOf(interfaces.filter((i) => i.name !== 'lo')));
}
