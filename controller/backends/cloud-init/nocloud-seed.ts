// The NoCloud seed of a machine (pure), for every backend that hands the guest
// a cidata image (libvirt, Proxmox, Cloud Hypervisor): meta-data naming the
// instance by its UUID (cloud-init runs its first-boot modules once per
// machine) with its hostname and providerID, the user-data as rendered, and a
// network-config v2 matching each NIC by its MAC, DHCP or the static address
// of its IPAM. Names, domains and addresses are checked against their grammar
// before they reach YAML the guest acts on (as vSphere's guest-info does,
// issue 10): a machine carrying another is refused, naming the field.
import { stringify } from 'yaml';
import { isDnsName, isInterfaceId, isInterfaceName, isIpAddress, type Ipam } from '../../../infra/api/common.js';
import { BackendError, BackendErrorKind } from '../backend-error.js';
import type { UserData } from '../user-data-bytes.js';
import { toNoCloudIso } from './nocloud-iso.js';

export interface SeedNic {
  /** Interface name in the guest. */
  readonly name: string;
  readonly mac: string;
  readonly ipam: Ipam | undefined;
}

export interface SeedInput {
  readonly uuid: string;
  readonly hostname: string;
  readonly providerID: string;
  /** Rendered user-data, as bytes (the file holds them as they are, gzip included); none: an empty cloud-config. */
  readonly userData: UserData | undefined;
  readonly nics: readonly SeedNic[];
  /** Where the NICs are in the machine's spec, for error messages: `spec.network` or `spec.nics`. */
  readonly nicsField: string;
}

export interface SeedFiles {
  readonly metaData: string;
  readonly userData: UserData;
  readonly networkConfig: string;
}

/** The three files of the seed; throws Rejected for a value the guest must not be given. */
export function toSeedFiles(input: SeedInput): SeedFiles {
  assertGuestSafe(input);
  // cloud-init reads YAML 1.1: quote what 1.1 would turn into booleans or numbers.
  const yaml = (value: unknown): string => stringify(value, { version: '1.1' });
  return {
    metaData: yaml({ 'instance-id': input.uuid, 'local-hostname': input.hostname, 'provider-id': input.providerID }),
    // cloud-init needs the file; an empty cloud-config changes nothing.
    userData: input.userData ?? '#cloud-config\n{}\n',
    networkConfig: yaml({ version: 2, ethernets: Object.fromEntries(input.nics.map((nic) => [nic.name, ethernet(nic)])) }),
  };
}

/** The seed image: ISO 9660 labelled cidata. */
export function toSeedImage(input: SeedInput): Buffer {
  return toNoCloudIso(toSeedFiles(input));
}

function ethernet(nic: SeedNic): Record<string, unknown> {
  // Linux interface names are at most 15 bytes; a longer name keeps the guest's own.
  const match = { match: { macaddress: nic.mac }, ...(isInterfaceName(nic.name) ? { 'set-name': nic.name } : {}) };
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

function assertGuestSafe(input: SeedInput): void {
  if (!isDnsName(input.hostname)) refuse('metadata.name', input.hostname, 'a DNS name');
  input.nics.forEach((nic, i) => {
    const at = `${input.nicsField}[${i}]`;
    if (!isInterfaceId(nic.name)) refuse(`${at}.name`, nic.name, 'a Linux interface name');
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
