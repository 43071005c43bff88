// A cloud-init NoCloud seed as an ISO 9660 image, for backends that hand the
// guest its user-data on a disk (libvirt, Cloud Hypervisor). cloud-init finds
// the seed by its filesystem label, `cidata` (or `CIDATA`), and reads
// `meta-data` (required, may be empty), `user-data`, and the optional
// `vendor-data` and `network-config` from its root: the layout documented for
// NoCloud ("genisoimage -output seed.iso -volid cidata -joliet -rock user-data
// meta-data"). Pure: what the guest reads in, bytes out; no backend knowledge.
import { toIso9660Image, type IsoFile } from './iso9660-image.js';

/** The label cloud-init's NoCloud looks for (`LABEL=cidata`). */
export const NOCLOUD_LABEL = 'cidata';

export interface NoCloudSeed {
  /** `user-data`: `#cloud-config` YAML, a script, or MIME multipart, as the guest reads it. */
  readonly userData: string | Uint8Array;
  /** `meta-data`: YAML (`instance-id`, `local-hostname`); cloud-init needs the file even if empty. */
  readonly metaData: string | Uint8Array;
  /** `network-config`: network configuration v1 or v2 YAML. @default no file (the guest uses DHCP on its first NIC) */
  readonly networkConfig?: string | Uint8Array;
  /** `vendor-data`. @default no file */
  readonly vendorData?: string | Uint8Array;
}

/** The seed image (a multiple of 2048 bytes), attachable as a CD-ROM or a raw disk. */
export function toNoCloudIso(seed: NoCloudSeed): Buffer {
  const files: IsoFile[] = [
    { name: 'meta-data', data: bytes(seed.metaData) },
    { name: 'user-data', data: bytes(seed.userData) },
  ];
  if (seed.networkConfig !== undefined) files.push({ name: 'network-config', data: bytes(seed.networkConfig) });
  if (seed.vendorData !== undefined) files.push({ name: 'vendor-data', data: bytes(seed.vendorData) });
  return toIso9660Image({ volumeId: NOCLOUD_LABEL, files });
}

function bytes(content: string | Uint8Array): Uint8Array {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}
