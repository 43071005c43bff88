// The guest's first-boot data as cloud-init's VMware datasource reads it:
// guestinfo.userdata / guestinfo.metadata, base64 (pure). The metadata names
// the instance and host, carries the providerID and a netplan v2 network
// config matched by MAC, so static addresses apply before the first DHCP try.
import { stringify } from 'yaml';
import type { Ipam } from '../../../../infra/api/common.js';

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
  /** Rendered user-data; omitted from guestinfo when undefined. */
  readonly userData: string | undefined;
}

/** The extraConfig entries to write before the first power-on. An empty value removes a key. */
export function guestInfoExtraConfig(input: GuestInfoInput): Record<string, string> {
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
    'guestinfo.userdata': input.userData === undefined ? '' : base64(input.userData),
    'guestinfo.userdata.encoding': input.userData === undefined ? '' : 'base64',
  };
}

function ethernet(nic: GuestNicInput): Record<string, unknown> {
  // Linux interface names are at most 15 bytes; a longer name keeps the guest's own.
  const setName = nic.name.length <= 15 ? { 'set-name': nic.name } : {};
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
