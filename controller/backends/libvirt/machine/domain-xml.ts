// The domain XML of a LibvirtMachine (pure), built as an object and written by
// fast-xml-parser, which escapes every text and attribute: no name, path or
// mark can end its element and add one. And the one thing read back from a
// domain's XML: the ownership mark in its <metadata> (ADR 16), or, once the
// domain is released, the mark it had (`released-from`).
//
// Shape (libvirt's formatdomain.html): the machine's UUID as <uuid>; the mark
// as <banlieue:machine owner="Kind/ns/name"/> in our own XML namespace; vCPUs
// and memory; BIOS, or UEFI chosen by libvirt (`firmware='efi'`, with Secure
// Boot and SMM on q35 for efi-secure); ACPI/APIC; disks as pool volumes
// (`type='volume'`, so any pool type works), CD-ROMs (installer, seed) on a
// virtio-scsi controller, which both i440fx and q35 guests see; NICs with
// fixed MACs; the serial console as a pty logged to a file (virtlogd); a
// guest-agent channel (addresses from the agent, where the guest runs one);
// an RNG for early entropy.
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import type { Firmware } from '../../../../infra/api/machine-fields.js';
import type { VmMarks } from '../../ownership.js';
import type { DomainType } from '../mapping.js';

/** Our XML namespace in <metadata>: libvirt keeps one element per namespace. */
export const METADATA_NAMESPACE = 'https://banlieue.io/xmlns/libvirt-machine/v1';
const METADATA_PREFIX = 'banlieue';
const METADATA_ELEMENT = `${METADATA_PREFIX}:machine`;

export interface VolumeRef {
  readonly pool: string;
  readonly volume: string;
}

export interface DomainDisk extends VolumeRef {
  /** qcow2 or raw. */
  readonly format: string;
  readonly bus: 'virtio' | 'scsi' | 'sata';
}

export interface DomainNic {
  readonly kind: 'network' | 'bridge';
  readonly source: string;
  readonly mac: string;
  readonly model: string;
}

export interface DomainInput {
  readonly type: DomainType;
  readonly name: string;
  readonly uuid: string;
  /** ownerMark() of the machine. */
  readonly owner: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly firmware: Firmware;
  readonly machineType: string | undefined;
  /** The OS disk first. */
  readonly disks: readonly DomainDisk[];
  /** An installer ISO, booted before the OS disk. */
  readonly installMedia: VolumeRef | undefined;
  /** The NoCloud seed ISO. */
  readonly seed: VolumeRef | undefined;
  readonly nics: readonly DomainNic[];
  /** Where the serial console is logged on the host. */
  readonly consoleLog: string;
}

/** Where libvirt's QEMU driver keeps per-domain logs (Debian, Fedora…): the console log goes beside them. */
export function consoleLogPath(domainName: string): string {
  return `/var/log/libvirt/qemu/${domainName}-console.log`;
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', format: true, suppressEmptyNode: true });
const compactBuilder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@', suppressEmptyNode: true });

export function toDomainXml(input: DomainInput): string {
  const secure = input.firmware === 'efi-secure';
  const efi = input.firmware !== 'bios';
  // Secure Boot needs SMM, which only q35 has.
  const machine = input.machineType ?? (secure ? 'q35' : undefined);
  const domain = {
    '@type': input.type,
    name: input.name,
    uuid: input.uuid,
    metadata: { [METADATA_ELEMENT]: { [`@xmlns:${METADATA_PREFIX}`]: METADATA_NAMESPACE, '@owner': input.owner } },
    memory: { '@unit': 'MiB', '#text': input.memoryMiB },
    vcpu: { '@placement': 'static', '#text': input.vcpus },
    os: {
      ...(efi ? { '@firmware': 'efi' } : {}),
      type: { '@arch': 'x86_64', ...(machine ? { '@machine': machine } : {}), '#text': 'hvm' },
      ...(secure
        ? {
            firmware: {
              feature: [
                { '@enabled': 'yes', '@name': 'secure-boot' },
                { '@enabled': 'yes', '@name': 'enrolled-keys' },
              ],
            },
          }
        : {}),
      boot: [...(input.installMedia ? [{ '@dev': 'cdrom' }] : []), { '@dev': 'hd' }],
    },
    features: { acpi: '', apic: '', ...(secure ? { smm: { '@state': 'on' } } : {}) },
    // TCG emulates a generic CPU: host-passthrough is for KVM only.
    ...(input.type === 'kvm' ? { cpu: { '@mode': 'host-passthrough' } } : {}),
    clock: { '@offset': 'utc' },
    on_poweroff: 'destroy',
    on_reboot: 'restart',
    on_crash: 'destroy',
    devices: devices(input),
  };
  return builder.build({ domain }) as string;
}

function devices(input: DomainInput): Record<string, unknown> {
  const names = new DeviceNames();
  const disks = input.disks.map((d) => ({
    '@type': 'volume',
    '@device': 'disk',
    driver: { '@name': 'qemu', '@type': d.format, '@discard': 'unmap' },
    source: { '@pool': d.pool, '@volume': d.volume },
    target: { '@dev': names.next(d.bus), '@bus': d.bus },
  }));
  const cdroms = [input.installMedia, input.seed].flatMap((iso) =>
    iso
      ? [
          {
            '@type': 'volume',
            '@device': 'cdrom',
            driver: { '@name': 'qemu', '@type': 'raw' },
            source: { '@pool': iso.pool, '@volume': iso.volume },
            target: { '@dev': names.next('scsi'), '@bus': 'scsi' },
            readonly: '',
          },
        ]
      : [],
  );
  const usesScsi = cdroms.length > 0 || input.disks.some((d) => d.bus === 'scsi');
  return {
    disk: [...disks, ...cdroms],
    ...(usesScsi ? { controller: { '@type': 'scsi', '@index': 0, '@model': 'virtio-scsi' } } : {}),
    interface: input.nics.map((nic) => ({
      '@type': nic.kind,
      source: { [nic.kind === 'bridge' ? '@bridge' : '@network']: nic.source },
      mac: { '@address': nic.mac },
      model: { '@type': nic.model },
    })),
    serial: { '@type': 'pty', target: { '@port': 0 }, log: { '@file': input.consoleLog, '@append': 'on' } },
    console: { '@type': 'pty', target: { '@type': 'serial', '@port': 0 } },
    channel: { '@type': 'unix', target: { '@type': 'virtio', '@name': 'org.qemu.guest_agent.0' } },
    rng: { '@model': 'virtio', backend: { '@model': 'random', '#text': '/dev/urandom' } },
  };
}

/** Target names per bus family: vda, vdb… for virtio; sda, sdb… shared by SCSI and SATA. */
class DeviceNames {
  private virtio = 0;
  private sd = 0;

  next(bus: DomainDisk['bus']): string {
    return bus === 'virtio' ? `vd${letters(this.virtio++)}` : `sd${letters(this.sd++)}`;
  }
}

/** 0 → a, 25 → z, 26 → aa (as Linux names disks). */
function letters(index: number): string {
  const head = Math.floor(index / 26);
  return (head > 0 ? letters(head - 1) : '') + String.fromCharCode(97 + (index % 26));
}

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseAttributeValue: false, parseTagValue: false });

/** The ownership mark in a domain's XML; undefined when it carries none. */
export function ownerMarkOf(xml: string): string | undefined {
  return marksOf(xml).owner;
}

/** The marks in a domain's XML: the ownership mark, and the one a release left (`released-from`). */
export function marksOf(xml: string): VmMarks {
  const parsed = parser.parse(xml) as { domain?: { metadata?: Record<string, unknown> } };
  const metadata = parsed.domain?.metadata;
  const element = metadata !== undefined && typeof metadata === 'object' ? ourElement(metadata) : undefined;
  const attribute = (name: string): string | undefined => {
    const value = element?.[`@${name}`];
    return typeof value === 'string' ? value : undefined;
  };
  return { owner: attribute('owner'), releasedFrom: attribute('released-from') };
}

/** Our element of <metadata>: libvirt may write it under another prefix, so the namespace decides. */
function ourElement(metadata: Record<string, unknown>): Record<string, unknown> | undefined {
  for (const [key, value] of Object.entries(metadata)) {
    if (!key.endsWith(':machine') || typeof value !== 'object' || value === null) continue;
    const element = value as Record<string, unknown>;
    const prefix = key.slice(0, -':machine'.length);
    if (element[`@xmlns:${prefix}`] === METADATA_NAMESPACE) return element;
  }
  return undefined;
}

/**
 * Our <metadata> element of a released domain, for DOMAIN_SET_METADATA (libvirt adds the
 * namespace): no owner, the mark it had as `released-from`.
 */
export function releasedMetadataXml(releasedFrom: string): { readonly uri: string; readonly key: string; readonly xml: string } {
  const xml = (compactBuilder.build({ machine: { '@released-from': releasedFrom } }) as string).trim();
  return { uri: METADATA_NAMESPACE, key: METADATA_PREFIX, xml };
}

/** A volume's XML, as STORAGE_VOL_GET_XML_DESC gives it: what an overlay and the domain need of it. */
export interface VolumeFacts {
  readonly path: string;
  readonly format: string;
  readonly capacityBytes: number;
}

export function volumeFactsOf(xml: string): VolumeFacts {
  const parsed = parser.parse(xml) as { volume?: { capacity?: { '#text'?: string } | string; target?: { path?: string; format?: { '@type'?: string } } } };
  const volume = parsed.volume;
  const capacity = typeof volume?.capacity === 'object' ? volume.capacity['#text'] : volume?.capacity;
  return { path: volume?.target?.path ?? '', format: volume?.target?.format?.['@type'] ?? 'raw', capacityBytes: Number(capacity ?? 0) };
}

/** A volume's XML for STORAGE_VOL_CREATE_XML: blank, or a qcow2 overlay on `backing`. */
export function toVolumeXml(name: string, capacityBytes: number, format: string, backing?: Pick<VolumeFacts, 'path' | 'format'>): string {
  const volume = {
    name,
    capacity: { '@unit': 'bytes', '#text': capacityBytes },
    target: { format: { '@type': format } },
    ...(backing ? { backingStore: { path: backing.path, format: { '@type': backing.format } } } : {}),
  };
  return builder.build({ volume }) as string;
}
