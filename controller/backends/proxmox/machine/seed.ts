// The cloud-init seed of a ProxmoxMachine (pure): a NoCloud ISO (label
// `cidata`) with meta-data, user-data and a v2 network-config matching NICs by
// the MACs the VM is given (mac-address.ts). Uploaded to the failure domain's
// ISO storage and attached as ide2 before the first boot (docs/proxmox.md,
// "Guest data": PVE's upload API takes `iso` content but not `snippets`, so
// `cicustom` cannot carry arbitrary user-data over the API; its own cloud-init
// drive beside ours would give the guest two `cidata` disks).
//
// Injection: the files are built as objects and serialised by the yaml library,
// and every name, domain and address is checked against its grammar first
// (infra/api/common.ts); a machine carrying another is refused, naming the field.
import { stringify } from 'yaml';
import { isDnsName, isInterfaceId, isInterfaceName, isIpAddress, type Ipam } from '../../../../infra/api/common.js';
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import type { NoCloudSeed } from '../../cloud-init/nocloud-iso.js';
import { macOf } from './mac-address.js';

export interface SeedInput {
  readonly hostname: string;
  readonly uuid: string;
  readonly providerID: string;
  readonly spec: Pick<ProxmoxMachineSpec, 'nics'>;
  readonly userData: string | undefined;
}

/** Whether the machine gets a seed: user-data to hand over, or a static address to configure. */
export function needsSeed(spec: Pick<ProxmoxMachineSpec, 'nics'>, userData: string | undefined): boolean {
  return userData !== undefined || spec.nics.some((n) => n.ipam?.static);
}

/**
 * The storage the seed ISO goes to: spec.isoStorage, else the failure
 * domain's (raw.isoStorage, which the provider publishes per node), so a
 * machine Cluster API clones from a template needs not name one.
 */
export function seedStorage(spec: Pick<ProxmoxMachineSpec, 'isoStorage'>, raw: Readonly<Record<string, string>>): string | undefined {
  return spec.isoStorage ?? raw.isoStorage;
}

/** `banlieue-<uuid>.iso`: one per machine, found again by name after a crash. */
export function seedFileName(uuid: string): string {
  return `banlieue-${uuid.toLowerCase()}.iso`;
}

/** The ISO's volume id on `storage`. */
export function seedVolume(storage: string, uuid: string): string {
  return `${storage}:iso/${seedFileName(uuid)}`;
}

/** The seed's files. Throws BackendError Rejected for a name, domain or address the guest must not be given. */
export function seedFiles(input: SeedInput): NoCloudSeed {
  assertGuestSafe(input);
  const metaData = { 'instance-id': input.uuid, 'local-hostname': input.hostname, 'provider-id': input.providerID };
  const network = {
    version: 2,
    ethernets: Object.fromEntries(input.spec.nics.map((nic) => [nic.name, ethernet(nic.name, macOf(input.uuid, nic), nic.ipam)])),
  };
  // cloud-init reads YAML 1.1: quote what 1.1 would turn into booleans or base-60 numbers.
  return {
    metaData: stringify(metaData, { version: '1.1' }),
    // NoCloud needs the file; an empty cloud-config changes nothing.
    userData: input.userData ?? '#cloud-config\n{}\n',
    networkConfig: stringify(network, { version: '1.1' }),
  };
}

function ethernet(name: string, mac: string, ipam: Ipam | undefined): Record<string, unknown> {
  const match = { match: { macaddress: mac }, ...(isInterfaceName(name) ? { 'set-name': name } : {}) };
  const fixed = ipam?.static;
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
  input.spec.nics.forEach((nic, i) => {
    const at = `spec.nics[${i}]`;
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
