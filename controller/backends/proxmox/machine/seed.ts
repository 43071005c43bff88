// The cloud-init seed of a ProxmoxMachine (pure): a NoCloud ISO (label
// `cidata`) with meta-data, user-data and a v2 network-config matching NICs by
// the MACs the VM is given (mac-address.ts). Uploaded to the failure domain's
// ISO storage and attached as ide2 before the first boot (docs/proxmox.md,
// "Guest data": PVE's upload API takes `iso` content but not `snippets`, so
// `cicustom` cannot carry arbitrary user-data over the API; its own cloud-init
// drive beside ours would give the guest two `cidata` disks).
// The files themselves, and the checks of what reaches the guest, are the
// shared cloud-init/nocloud-seed.ts.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { NoCloudSeed } from '../../cloud-init/nocloud-iso.js';
import { toSeedFiles } from '../../cloud-init/nocloud-seed.js';
import type { UserData } from '../../user-data-bytes.js';
import { macOf } from './mac-address.js';

export interface SeedInput {
  readonly hostname: string;
  readonly uuid: string;
  readonly providerID: string;
  readonly spec: Pick<ProxmoxMachineSpec, 'nics'>;
  readonly userData: UserData | undefined;
}

/** Whether the machine gets a seed: user-data to hand over, or a static address to configure. */
export function needsSeed(spec: Pick<ProxmoxMachineSpec, 'nics'>, userData: UserData | undefined): boolean {
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
  const nics = input.spec.nics.map((nic) => ({ name: nic.name, mac: macOf(input.uuid, nic), ipam: nic.ipam }));
  return toSeedFiles({ uuid: input.uuid, hostname: input.hostname, providerID: input.providerID, userData: input.userData, nics, nicsField: 'spec.nics' });
}
