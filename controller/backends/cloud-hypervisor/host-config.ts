// The host's own facts, which no custom resource may set (a Provider or machine
// naming a host path would let its author read or overwrite any file the
// provider can): where VMM state lives, which binary runs VMs, which
// directories and bridges the storage and network classes are, where images
// are, when the host stops taking VMs, which Url images it downloads (the lab
// opt-ins are the host admin's: no tenant writes this file, and a VMImage or
// Provider cannot loosen them). One small YAML file, strict: an unknown
// key or a relative path is refused with its name (docs/adr/0017).
import { hostname } from 'node:os';
import { isAbsolute, normalize } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_STATE_ROOT } from './state-dir.js';

/** Where `banlieue provider cloud-hypervisor` reads its host config unless told otherwise. */
export const DEFAULT_HOST_CONFIG_PATH = '/etc/banlieue/cloud-hypervisor.yaml';
/** The environment variable naming another host config file (the systemd unit sets it). */
export const HOST_CONFIG_ENV = 'BANLIEUE_CH_HOST_CONFIG';

export interface HostVmm {
  /** The cloud-hypervisor binary (v53+). */
  readonly binary: string;
  /** Firmware for images without a kernel beside them (rust-hypervisor-firmware or CLOUDHV.fd). */
  readonly firmware?: string;
  /** Refuse to serve without /dev/kvm. @default true */
  readonly requireKvm: boolean;
}

export interface HostCapacity {
  /** The failure domain is withdrawn while this much of the host's memory is in use (MemTotal − MemAvailable). @default 90 */
  readonly maxMemoryUsedPercent: number;
  /** A storage class with less free space than this is not offered; with none left, the failure domain is withdrawn. @default 5 */
  readonly minStorageFreeGiB: number;
}

/** What the host downloads for VMImage Url sources (docs/cloud-hypervisor.md). */
export interface HostUrlImages {
  /** The largest image downloaded, in MiB; a larger one is stopped and refused (ImageTooLarge). @default 20480 (20 GiB) */
  readonly maxSizeMiB: number;
  /** A PEM bundle of CAs trusted for Url images besides the system's (an internal mirror). @default the system's CAs only */
  readonly caFile?: string;
  /** Labs only: take `http://` URLs, which anyone on the path can replace. @default false */
  readonly allowHttp: boolean;
  /** Labs only: take Url sources without `spec.sources[].checksum`. @default false */
  readonly allowWithoutChecksum: boolean;
}

export interface HostConfig {
  /** This host's name: the Provider's endpoint names it, and machines record it (status.hostUid). @default os.hostname() */
  readonly hostName: string;
  /** Machine state directories (socket, pidfile, logs, seed, saved config). @default /var/lib/banlieue/cloud-hypervisor */
  readonly stateRoot: string;
  /** Directory of the VM images (VMImage sources of kind BackingFile name files here). */
  readonly imageDir: string;
  readonly vmm: HostVmm;
  /** Host storage class name → directory of the OS disks. */
  readonly storageClasses: Readonly<Record<string, string>>;
  /** Host network class name → Linux bridge the taps join. */
  readonly networkClasses: Readonly<Record<string, string>>;
  /**
   * A network namespace the bridges live in: taps are made there (`ip -n`) and the
   * VMMs run in it (`ip netns exec`), so guest networking stays off the host's own
   * interfaces. @default the host's namespace
   */
  readonly netns?: string;
  readonly capacity: HostCapacity;
  /** How long a guest has to power off after the ACPI power button before the VM is stopped. @default 60 */
  readonly powerOffGraceSeconds: number;
  /** What the host downloads for VMImage Url sources. @default https with a checksum, 20 GiB at most */
  readonly urlImages: HostUrlImages;
}

const TOP_KEYS = [
  'hostName',
  'stateRoot',
  'imageDir',
  'vmm',
  'storageClasses',
  'networkClasses',
  'netns',
  'capacity',
  'powerOffGraceSeconds',
  'urlImages',
] as const;
const VMM_KEYS = ['binary', 'firmware', 'requireKvm'] as const;
const CAPACITY_KEYS = ['maxMemoryUsedPercent', 'minStorageFreeGiB'] as const;
const URL_IMAGE_KEYS = ['maxSizeMiB', 'caFile', 'allowHttp', 'allowWithoutChecksum'] as const;
const CLASS_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
// Linux interface names: 1-15 bytes, no '/', whitespace or ':'.
const BRIDGE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;
const NETNS_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A host config that cannot be used; the message names the key. */
export class HostConfigError extends Error {
  constructor(source: string, message: string) {
    super(`${source}: ${message}`);
    this.name = 'HostConfigError';
  }
}

/** Parses and checks a host config (YAML or JSON); throws HostConfigError naming `source` and the key. */
export function parseHostConfig(text: string, source: string, defaults: { hostName?: string } = {}): HostConfig {
  const fail = (message: string): never => {
    throw new HostConfigError(source, message);
  };
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (error) {
    return fail(`not YAML: ${(error as Error).message}`);
  }
  const top = record(doc ?? {}, 'the document', fail);
  onlyKeys(top, TOP_KEYS, '', fail);
  const config: HostConfig = {
    hostName: optionalString(top.hostName, 'hostName', fail) ?? defaults.hostName ?? hostname(),
    stateRoot: path(top.stateRoot ?? DEFAULT_STATE_ROOT, 'stateRoot', fail),
    imageDir: path(top.imageDir, 'imageDir', fail),
    vmm: vmmSection(top.vmm, fail),
    storageClasses: classes(top.storageClasses, 'storageClasses', (value, key) => path(value, key, fail), fail),
    networkClasses: classes(top.networkClasses, 'networkClasses', (value, key) => pattern(value, key, BRIDGE_NAME, 'a Linux interface name', fail), fail),
    ...(top.netns === undefined ? {} : { netns: pattern(top.netns, 'netns', NETNS_NAME, 'a network namespace name', fail) }),
    capacity: capacitySection(top.capacity, fail),
    powerOffGraceSeconds: number(top.powerOffGraceSeconds ?? 60, 'powerOffGraceSeconds', 0, 3600, fail),
    urlImages: urlImagesSection(top.urlImages, fail),
  };
  if (!CLASS_NAME.test(config.hostName)) fail(`hostName "${config.hostName}" is not a DNS label (set hostName)`);
  if (Object.keys(config.storageClasses).length === 0) fail('storageClasses declares no class: a VM needs a directory for its disk');
  return config;
}

type Fail = (message: string) => never;

function vmmSection(value: unknown, fail: Fail): HostConfig['vmm'] {
  const vmm = record(value, 'vmm', fail);
  onlyKeys(vmm, VMM_KEYS, 'vmm.', fail);
  return {
    binary: path(vmm.binary, 'vmm.binary', fail),
    ...(vmm.firmware === undefined ? {} : { firmware: path(vmm.firmware, 'vmm.firmware', fail) }),
    requireKvm: optionalBoolean(vmm.requireKvm, 'vmm.requireKvm', fail) ?? true,
  };
}

function capacitySection(value: unknown, fail: Fail): HostConfig['capacity'] {
  const capacity = record(value ?? {}, 'capacity', fail);
  onlyKeys(capacity, CAPACITY_KEYS, 'capacity.', fail);
  return {
    maxMemoryUsedPercent: number(capacity.maxMemoryUsedPercent ?? 90, 'capacity.maxMemoryUsedPercent', 1, 100, fail),
    minStorageFreeGiB: number(capacity.minStorageFreeGiB ?? 5, 'capacity.minStorageFreeGiB', 0, 1 << 30, fail),
  };
}

/** The lab opt-ins are off unless the host's admin writes them. */
function urlImagesSection(value: unknown, fail: Fail): HostConfig['urlImages'] {
  const urlImages = record(value ?? {}, 'urlImages', fail);
  onlyKeys(urlImages, URL_IMAGE_KEYS, 'urlImages.', fail);
  return {
    maxSizeMiB: number(urlImages.maxSizeMiB ?? 20 * 1024, 'urlImages.maxSizeMiB', 1, 1024 * 1024, fail),
    ...(urlImages.caFile === undefined ? {} : { caFile: path(urlImages.caFile, 'urlImages.caFile', fail) }),
    allowHttp: optionalBoolean(urlImages.allowHttp, 'urlImages.allowHttp', fail) ?? false,
    allowWithoutChecksum: optionalBoolean(urlImages.allowWithoutChecksum, 'urlImages.allowWithoutChecksum', fail) ?? false,
  };
}

function record(value: unknown, what: string, fail: Fail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(`${what} must be a mapping`);
  return value as Record<string, unknown>;
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[], prefix: string, fail: Fail): void {
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0)
    fail(`unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => prefix + k).join(', ')} (known: ${allowed.map((k) => prefix + k).join(', ')})`);
}

function optionalString(value: unknown, key: string, fail: Fail): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') return fail(`${key} must be a non-empty string`);
  return value;
}

function optionalBoolean(value: unknown, key: string, fail: Fail): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') return fail(`${key} must be true or false`);
  return value;
}

function path(value: unknown, key: string, fail: Fail): string {
  const text = optionalString(value, key, fail) ?? fail(`${key} is required`);
  // Normalised and absolute: a host path is compared and joined, never resolved against a cwd.
  if (!isAbsolute(text)) fail(`${key} "${text}" is not an absolute path`);
  const normal = normalize(text);
  return normal.length > 1 ? normal.replace(/\/+$/, '') : normal;
}

function pattern(value: unknown, key: string, shape: RegExp, what: string, fail: Fail): string {
  const text = optionalString(value, key, fail) ?? fail(`${key} is required`);
  if (!shape.test(text)) fail(`${key} "${text}" is not ${what}`);
  return text;
}

function number(value: unknown, key: string, min: number, max: number, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    return fail(`${key} must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return value;
}

function classes(value: unknown, key: string, check: (value: unknown, key: string) => string, fail: Fail): Record<string, string> {
  if (value === undefined) return {};
  const entries = Object.entries(record(value, key, fail));
  for (const [name] of entries) if (!CLASS_NAME.test(name)) fail(`${key}.${name}: a class name is a DNS label`);
  return Object.fromEntries(entries.map(([name, target]) => [name, check(target, `${key}.${name}`)]));
}
