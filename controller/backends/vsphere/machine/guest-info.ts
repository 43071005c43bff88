// The guest's first-boot data as cloud-init's VMware datasource reads it:
// guestinfo.userdata / guestinfo.metadata, base64 (pure). The metadata names
// the instance and host, carries the providerID and a netplan v2 network
// config matched by MAC, so static addresses apply before the first DHCP try.
//
// Injection (issue 10): the metadata is built as an object and serialised by
// the yaml library, so no value, and no interface name used as an `ethernets`
// key, can end its scalar and add a key. That is not enough: netplan copies
// interface names and search domains on into networkd and udev files (and uses
// the ID in file names), where a newline or '/' would still act. So every name,
// domain and address is first checked against its grammar (infra/api/common.ts)
// and a machine carrying another is refused, naming the field, not rendered.
import { stringify } from 'yaml';
import { isDnsName, isInterfaceId, isInterfaceName, isIpAddress, MAC_ADDRESS_PATTERN, type Ipam } from '../../../../infra/api/common.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { isGzip, userDataBytes, type UserData } from '../../user-data-bytes.js';

export interface GuestNicInput {
  /** Interface name in the guest (spec.network[].name). */
  readonly name: string;
  /** MAC of the virtual NIC as vCenter assigned or was told. */
  readonly macAddress: string | undefined;
  readonly ipam: Ipam | undefined;
}

export interface GuestInfoInput {
  readonly hostname: string;
  readonly instanceId: string;
  readonly providerID: string;
  readonly nics: readonly GuestNicInput[];
  /** Rendered user-data, as bytes; omitted from guestinfo when undefined. */
  readonly userData: UserData | undefined;
}

/**
 * The extraConfig entries to write before the first power-on. An empty value removes a key.
 * Throws BackendError Rejected for a name, domain or address the guest must not be given.
 */
export function guestInfoExtraConfig(input: GuestInfoInput): Record<string, string> {
  assertGuestSafe(input);
  const metadata = {
    'instance-id': input.instanceId,
    'local-hostname': input.hostname,
    hostname: input.hostname,
    'provider-id': input.providerID,
    network: { version: 2, ethernets: Object.fromEntries(input.nics.map((nic) => [nic.name, ethernet(nic)])) },
  };
  return {
    // cloud-init reads YAML 1.1: quote what 1.1 would turn into booleans or base-60 numbers (`on`, 12:34:56).
    'guestinfo.metadata': base64(stringify(metadata, { version: '1.1' })),
    'guestinfo.metadata.encoding': 'base64',
    'guestinfo.userdata': input.userData === undefined ? '' : userDataBytes(input.userData).toString('base64'),
    // cloud-init's VMware datasource gunzips after the base64 decode only when told so.
    'guestinfo.userdata.encoding': input.userData === undefined ? '' : isGzip(input.userData) ? 'gzip+base64' : 'base64',
  };
}

const MAC_ADDRESS = new RegExp(MAC_ADDRESS_PATTERN);

/** Refuses what could act in the guest beyond its YAML scalar (module header). */
function assertGuestSafe(input: GuestInfoInput): void {
  if (!isDnsName(input.hostname)) refuse('metadata.name', input.hostname, 'a DNS name');
  input.nics.forEach((nic, i) => {
    const at = `spec.network[${i}]`;
    if (!isInterfaceId(nic.name)) refuse(`${at}.name`, nic.name, 'a Linux interface name');
    if (nic.macAddress !== undefined && !MAC_ADDRESS.test(nic.macAddress)) refuse(`${at}.macAddress`, nic.macAddress, 'a MAC address');
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

function ethernet(nic: GuestNicInput): Record<string, unknown> {
  // Linux interface names are at most 15 bytes; a longer name keeps the guest's own.
  const setName = isInterfaceName(nic.name) ? { 'set-name': nic.name } : {};
  const match = nic.macAddress ? { match: { macaddress: nic.macAddress.toLowerCase() }, ...setName } : {};
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

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
