// A ProxmoxMachine's spec against a VM's config (pure): the keys to change and
// the disks to grow. Compared key by key on what each value means (PVE stores
// `memory: 2048` or `current=2048`, a NIC as `virtio=<MAC>,bridge=…`), never as
// whole strings, so a pass after a crash computes the same change, and a
// converged VM none.
import type { ProxmoxMachineSpec } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { MachineOwner } from '../../ownership.js';
import type { QemuConfigChange } from '../client/qemu.js';
import type { QemuConfig } from '../client/wire-types.js';
import { macOf } from './mac-address.js';
import { addTag, ownerTag, smbiosUuid, withMarks, withSmbiosUuid } from './vm-marks.js';

type Config = Readonly<Record<string, unknown>> & Partial<QemuConfig>;
type Change = QemuConfigChange;

/** A `key=value,flag,key=value` PVE property string as a map; a bare first item under `''`. */
export function parseProperties(value: string | undefined): Map<string, string> {
  const map = new Map<string, string>();
  for (const [i, part] of (value ?? '').split(',').entries()) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) map.set(i === 0 ? '' : part, part);
    else map.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return map;
}

const text = (config: Config, key: string): string | undefined => {
  const value = config[key];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
};

/** smbios1 UUID, description lines and owner tag: what identifies and marks the VM. */
export function identityChange(config: Config, uuid: string, owner: MachineOwner): Change {
  const change: Change = {};
  if (smbiosUuid(config.smbios1) !== uuid.toLowerCase()) change.smbios1 = withSmbiosUuid(config.smbios1, uuid);
  const description = withMarks(config.description, owner, uuid);
  if (description !== (config.description ?? '')) change.description = description;
  const tags = addTag(config.tags, ownerTag(owner));
  if (tags !== undefined) change.tags = tags;
  return change;
}

/** Memory in MiB of `2048` or `current=2048`. */
function memoryMiB(value: string | undefined): number | undefined {
  const current = parseProperties(value).get('current') ?? parseProperties(value).get('');
  return current === undefined ? undefined : Number(current);
}

/** Cores, sockets, memory and CPU type: what may change after provisioning too. */
export function hardwareChange(spec: ProxmoxMachineSpec, config: Config): Change {
  const change: Change = {};
  if (config.cores !== spec.cores) change.cores = spec.cores;
  const sockets = spec.sockets ?? 1;
  if ((config.sockets ?? 1) !== sockets) change.sockets = sockets;
  if (memoryMiB(config.memory) !== spec.memoryMiB) change.memory = String(spec.memoryMiB);
  if (spec.cpuType !== undefined) {
    const cpu = parseProperties(config.cpu);
    if ((cpu.get('cputype') ?? cpu.get('')) !== spec.cpuType) change.cpu = spec.cpuType;
  }
  return change;
}

/** The OS disk's key: the first disk (not a CD-ROM) of scsi0, virtio0, sata0, ide0. */
export function osDiskKey(config: Config): string | undefined {
  return ['scsi0', 'virtio0', 'sata0', 'ide0'].find((key) => {
    const value = text(config, key);
    return value !== undefined && !value.includes('media=cdrom');
  });
}

/** Size in GiB of a disk value's `size=` (`10G`, `512M`, `1T`). */
export function diskSizeGiB(value: string | undefined): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(parseProperties(value).get('size') ?? '');
  if (!match) return undefined;
  const factor = { '': 1 / 1024 ** 3, K: 1 / 1024 ** 2, M: 1 / 1024, G: 1, T: 1024 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * factor;
}

/** The storage of a disk value's volume (`local-lvm:vm-100-disk-0` → `local-lvm`). */
function storageOf(value: string | undefined): string | undefined {
  const volume = parseProperties(value).get('') ?? '';
  return volume.includes(':') ? volume.slice(0, volume.indexOf(':')) : undefined;
}

const dataDiskKey = (i: number): `scsi${number}` => `scsi${i + 1}`;

export interface FirstBootInputs {
  readonly spec: ProxmoxMachineSpec;
  readonly uuid: string;
  /** The seed ISO (`local:iso/banlieue-<uuid>.iso`) to attach as ide2; none when the machine needs no seed. */
  readonly seedVolume?: string;
}

/**
 * What the VM gets before it first boots: hardware, firmware, the guest agent,
 * NICs (model, MAC, bridge, VLAN tag; any others removed), data disks not there
 * yet (allocated by PVE: `STORAGE:SIZE`) and the seed ISO.
 */
export function firstBootChange(input: FirstBootInputs, config: Config): Change {
  const { spec } = input;
  const defaultStorage = spec.storage ?? storageOf(text(config, osDiskKey(config) ?? 'scsi0')) ?? '';
  const change: Change = { ...hardwareChange(spec, config), ...firmwareChange(spec, config, defaultStorage) };
  const agent = parseProperties(config.agent);
  if ((agent.get('enabled') ?? agent.get('')) !== '1') change.agent = '1';
  Object.assign(change, nicsChange(input, config), dataDisksChange(spec, config, defaultStorage));
  if (input.seedVolume !== undefined && parseProperties(config.ide2).get('') !== input.seedVolume) change.ide2 = `${input.seedVolume},media=cdrom`;
  const deletions = Object.keys(config).filter((key) => {
    const index = /^net(\d+)$/.exec(key)?.[1];
    return index !== undefined && Number(index) >= spec.nics.length;
  });
  if (deletions.length > 0) change.delete = deletions.join(',');
  return change;
}

/** BIOS or UEFI as the spec's firmware says; UEFI with its EFI vars disk (on `defaultStorage`), keys enrolled for secure boot. */
function firmwareChange(spec: ProxmoxMachineSpec, config: Config, defaultStorage: string): Change {
  const change: Change = {};
  const bios = spec.firmware === 'efi' || spec.firmware === 'efi-secure' ? 'ovmf' : 'seabios';
  if ((config.bios ?? 'seabios') !== bios) change.bios = bios;
  if (bios === 'ovmf' && config.efidisk0 === undefined) {
    change.efidisk0 = `${defaultStorage}:1,efitype=4m,pre-enrolled-keys=${spec.firmware === 'efi-secure' ? 1 : 0}`;
  }
  return change;
}

/** net0… as the spec's NICs: model, MAC, bridge and VLAN tag, written where any of them differs. */
function nicsChange({ spec, uuid }: FirstBootInputs, config: Config): Change {
  const change: Change = {};
  spec.nics.forEach((nic, i) => {
    const key = `net${i}` as const;
    const wanted = {
      model: nic.model ?? 'virtio',
      mac: macOf(uuid, nic),
      bridge: nic.bridge,
      tag: nic.vlan === undefined ? undefined : String(nic.vlan),
    };
    const current = parseProperties(text(config, key));
    const [model, mac] =
      [...current.entries()].find(([k]) => k !== 'bridge' && k !== 'tag' && /^[a-z0-9_-]+$/.test(k) && /^[0-9a-f:]{17}$/i.test(current.get(k) ?? '')) ?? [];
    const same = model === wanted.model && mac?.toLowerCase() === wanted.mac && current.get('bridge') === wanted.bridge && current.get('tag') === wanted.tag;
    if (!same) change[key] = `${wanted.model}=${wanted.mac},bridge=${wanted.bridge}${wanted.tag === undefined ? '' : `,tag=${wanted.tag}`}`;
  });
  return change;
}

/** The spec's data disks the VM does not have yet (on `defaultStorage` unless a disk names its own), and the controller their I/O threads need. */
function dataDisksChange(spec: ProxmoxMachineSpec, config: Config, defaultStorage: string): Change {
  const change: Change = {};
  const dataDisks = spec.dataDisks ?? [];
  dataDisks.forEach((disk, i) => {
    if (config[dataDiskKey(i)] !== undefined) return;
    const options = [disk.iothread ? 'iothread=1' : '', disk.discard ? 'discard=on' : '', disk.ssd ? 'ssd=1' : ''].filter(Boolean);
    change[dataDiskKey(i)] = [`${disk.storage ?? defaultStorage}:${disk.sizeGiB}`, ...options].join(',');
  });
  // An I/O thread per disk needs one controller per disk.
  if (dataDisks.some((d) => d.iothread) && config.scsihw !== 'virtio-scsi-single') change.scsihw = 'virtio-scsi-single';
  return change;
}

/** A disk to grow: its key and the size it must reach. */
export interface DiskGrowth {
  readonly disk: string;
  readonly sizeGiB: number;
}

/** The OS disk and data disks smaller than the spec says (PVE never shrinks; neither do we). */
export function diskGrowths(spec: ProxmoxMachineSpec, config: Config): DiskGrowth[] {
  const growths: DiskGrowth[] = [];
  const os = osDiskKey(config);
  const osSize = os === undefined ? undefined : diskSizeGiB(text(config, os));
  if (os !== undefined && osSize !== undefined && osSize < spec.osDiskSizeGiB) growths.push({ disk: os, sizeGiB: spec.osDiskSizeGiB });
  (spec.dataDisks ?? []).forEach((disk, i) => {
    const size = diskSizeGiB(text(config, dataDiskKey(i)));
    if (size !== undefined && size < disk.sizeGiB) growths.push({ disk: dataDiskKey(i), sizeGiB: disk.sizeGiB });
  });
  return growths;
}

/** Data disks of the spec the VM does not have: added after provisioning, reported, not attached (ADR 13). */
export function unattachedDisks(spec: ProxmoxMachineSpec, config: Config): string[] {
  return (spec.dataDisks ?? []).filter((_, i) => config[dataDiskKey(i)] === undefined).map((d) => d.name);
}

/** The keys of a change, for logs and Events (never the values: a description is long). */
export function describeChange(change: Change): string {
  return Object.keys(change).sort().join(', ');
}
