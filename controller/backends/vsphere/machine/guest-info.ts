// The guest's first-boot data as cloud-init's VMware datasource reads it:
// guestinfo.userdata / guestinfo.metadata, base64 (pure). The metadata names
// the instance and host, carries the providerID and the netplan v2 network
// config every backend gives (cloud-init/netplan.ts), matched by MAC, so static
// addresses apply before the first DHCP try. It is built as an object and
// serialised by the yaml library, after every name, domain and address was
// held to its grammar: a machine carrying another is refused, naming the field.
import { stringify } from 'yaml';
import type { Ipam } from '../../../../infra/api/addressing.js';
import { assertGuestSafe, netplanConfig, type NetplanNic } from '../../cloud-init/netplan.js';
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
  const nics: NetplanNic[] = input.nics.map((nic) => ({ name: nic.name, mac: nic.macAddress, ipam: nic.ipam }));
  assertGuestSafe({ hostname: input.hostname, nics, nicsField: 'spec.network' });
  const metadata = {
    'instance-id': input.instanceId,
    'local-hostname': input.hostname,
    hostname: input.hostname,
    'provider-id': input.providerID,
    network: netplanConfig(nics),
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

function base64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
