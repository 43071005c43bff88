// The NoCloud seed of a machine (pure), for every backend that hands the guest
// a cidata image (libvirt, Proxmox, Cloud Hypervisor): meta-data naming the
// instance by its UUID (cloud-init runs its first-boot modules once per
// machine) with its hostname and providerID, the user-data as rendered, and a
// network-config v2 matching each NIC by its MAC, DHCP or the static address
// of its IPAM (netplan.ts, as vSphere's guest-info). Names, domains and
// addresses are checked against their grammar before they reach YAML the guest
// acts on: a machine carrying another is refused, naming the field.
import { stringify } from 'yaml';
import type { Ipam } from '../../../infra/api/addressing.js';
import type { UserData } from '../user-data-bytes.js';
import { assertGuestSafe, netplanConfig, type NetplanNic } from './netplan.js';
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
  // A MAC the backend derived is always one; none known keeps the guest's own name.
  const nics: NetplanNic[] = input.nics.map((nic) => ({ name: nic.name, mac: nic.mac === '' ? undefined : nic.mac, ipam: nic.ipam }));
  assertGuestSafe({ hostname: input.hostname, nics, nicsField: input.nicsField });
  // cloud-init reads YAML 1.1: quote what 1.1 would turn into booleans or numbers.
  const yaml = (value: unknown): string => stringify(value, { version: '1.1' });
  return {
    metaData: yaml({ 'instance-id': input.uuid, 'local-hostname': input.hostname, 'provider-id': input.providerID }),
    // cloud-init needs the file; an empty cloud-config changes nothing.
    userData: input.userData ?? '#cloud-config\n{}\n',
    networkConfig: yaml(netplanConfig(nics)),
  };
}

/** The seed image: ISO 9660 labelled cidata. */
export function toSeedImage(input: SeedInput): Buffer {
  return toNoCloudIso(toSeedFiles(input));
}
