// What cloud-init is told of a machine's network and name (pure), for every backend: a
// netplan v2 `ethernets` map matching each NIC by its MAC (DHCP, or the static address of its
// IPAM), and the check that every name, domain and address in it holds to its grammar
// (infra/api/common.ts). The YAML library escapes scalars, but netplan copies interface names
// and search domains on into networkd and udev files (and uses the ID in file names), where a
// newline or '/' would still act: a machine carrying such a value is refused, naming the
// field, before anything is rendered.
import { isDnsName, isInterfaceId, isInterfaceName, isIpAddress } from '../../../infra/api/names.js';
import { MAC_ADDRESS_PATTERN, type Ipam } from '../../../infra/api/addressing.js';
import { BackendError, BackendErrorKind } from '../backend-error.js';

export interface NetplanNic {
  /** Interface name in the guest. */
  readonly name: string;
  /** The NIC's MAC; unknown (a vSphere NIC before its clone assigned one): the guest's own name stays. */
  readonly mac: string | undefined;
  readonly ipam: Ipam | undefined;
}

export interface GuestIdentity {
  readonly hostname: string;
  readonly nics: readonly NetplanNic[];
  /** Where the NICs are in the machine's spec, for messages: `spec.network` or `spec.nics`. */
  readonly nicsField: string;
}

/** `version: 2` network config for the NICs; call `assertGuestSafe` first. */
export function netplanConfig(nics: readonly NetplanNic[]): { readonly version: 2; readonly ethernets: Record<string, Record<string, unknown>> } {
  return { version: 2, ethernets: Object.fromEntries(nics.map((nic) => [nic.name, ethernet(nic)])) };
}

function ethernet(nic: NetplanNic): Record<string, unknown> {
  // Linux interface names are at most 15 bytes; a longer name keeps the guest's own.
  const setName = isInterfaceName(nic.name) ? { 'set-name': nic.name } : {};
  const match = nic.mac ? { match: { macaddress: nic.mac.toLowerCase() }, ...setName } : {};
  const fixed = nic.ipam?.static;
  if (!fixed) return { ...match, dhcp4: true, dhcp6: false };
  const v6 = fixed.address.includes(':');
  return {
    ...match,
    dhcp4: false,
    dhcp6: false,
    addresses: [`${fixed.address}/${fixed.prefix}`],
    ...(fixed.gateway ? { routes: [{ to: v6 ? '::/0' : '0.0.0.0/0', via: fixed.gateway }] } : {}),
    ...(fixed.nameservers?.length || fixed.domain
      ? { nameservers: { ...(fixed.nameservers?.length ? { addresses: [...fixed.nameservers] } : {}), ...(fixed.domain ? { search: [fixed.domain] } : {}) } }
      : {}),
  };
}

const MAC_ADDRESS = new RegExp(MAC_ADDRESS_PATTERN);

/** Throws BackendError Rejected for a host name, interface name, MAC, address or domain the guest must not be given. */
export function assertGuestSafe(guest: GuestIdentity): void {
  if (!isDnsName(guest.hostname)) refuse('metadata.name', guest.hostname, 'a DNS name');
  guest.nics.forEach((nic, i) => {
    const at = `${guest.nicsField}[${i}]`;
    if (!isInterfaceId(nic.name)) refuse(`${at}.name`, nic.name, 'a Linux interface name');
    if (nic.mac !== undefined && !MAC_ADDRESS.test(nic.mac)) refuse(`${at}.macAddress`, nic.mac, 'a MAC address');
    const fixed = nic.ipam?.static;
    if (!fixed) return;
    const ips: [string, string | undefined][] = [
      ['address', fixed.address],
      ['gateway', fixed.gateway],
      ...(fixed.nameservers ?? []).map((ns, j): [string, string] => [`nameservers[${j}]`, ns]),
    ];
    for (const [field, ip] of ips) if (ip !== undefined && !isIpAddress(ip)) refuse(`${at}.ipam.static.${field}`, ip, 'an IP address');
    if (fixed.domain !== undefined && !isDnsName(fixed.domain)) refuse(`${at}.ipam.static.domain`, fixed.domain, 'a DNS name');
  });
}

function refuse(field: string, value: string, what: string): never {
  throw new BackendError(BackendErrorKind.Rejected, `${field} ${JSON.stringify(value)} is not ${what}: refused before it reaches the guest`);
}
