// What the host has now, read for each discovery: the VMM binary and /dev/kvm,
// CPUs and memory (/proc/meminfo), each storage class directory and its free
// space (statfs), each network class bridge (ip link), the image directory.
// Reads only; the state root is created, as the provider's own directory.
import { constants } from 'node:fs';
import { access, mkdir, readFile, stat, statfs } from 'node:fs/promises';
import { cpus } from 'node:os';
import type { HostConfig } from '../host-config.js';
import { IpLinks } from './ip-links.js';

export interface StorageFact {
  readonly directory: string;
  /** Undefined when the directory is missing (or not a directory). */
  readonly freeGiB?: number;
}

export interface HostFacts {
  /** What keeps the host from running any VM (binary, KVM, state root): none when usable. */
  readonly unusable: readonly string[];
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly memoryAvailableMiB: number;
  /** By host storage class. */
  readonly storage: Readonly<Record<string, StorageFact>>;
  /** Host network classes whose bridge exists. */
  readonly bridges: readonly string[];
  readonly imageDirPresent: boolean;
}

const GIB = 1024 ** 3;

export async function readHostFacts(config: HostConfig): Promise<HostFacts> {
  const unusable: string[] = [];
  if (!(await canRun(config.vmm.binary))) unusable.push(`the VMM binary ${config.vmm.binary} is missing or not executable (vmm.binary)`);
  if (config.vmm.requireKvm && !(await exists('/dev/kvm'))) unusable.push('/dev/kvm is missing: KVM is not available');
  if (config.vmm.firmware !== undefined && !(await exists(config.vmm.firmware))) unusable.push(`the firmware ${config.vmm.firmware} is missing (vmm.firmware)`);
  try {
    await mkdir(config.stateRoot, { recursive: true, mode: 0o700 });
  } catch (error) {
    unusable.push(`the state root ${config.stateRoot} cannot be created: ${(error as Error).message}`);
  }
  const memory = parseMeminfo(await readFile('/proc/meminfo', 'utf8'));
  const storage = Object.fromEntries(
    await Promise.all(Object.entries(config.storageClasses).map(async ([name, directory]) => [name, { directory, ...(await freeGiB(directory)) }] as const)),
  );
  const links = await new IpLinks(config.netns).list();
  const bridges = Object.entries(config.networkClasses)
    .filter(([, bridge]) => links.some((l) => l.name === bridge && l.bridge))
    .map(([name]) => name);
  return { unusable, cpus: cpus().length, ...memory, storage, bridges, imageDirPresent: await isDirectory(config.imageDir) };
}

/** MemTotal and MemAvailable of /proc/meminfo, in MiB. */
export function parseMeminfo(text: string): { memoryMiB: number; memoryAvailableMiB: number } {
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? 0);
  return { memoryMiB: Math.floor(kib('MemTotal') / 1024), memoryAvailableMiB: Math.floor(kib('MemAvailable') / 1024) };
}

async function freeGiB(directory: string): Promise<{ freeGiB?: number }> {
  if (!(await isDirectory(directory))) return {};
  const fs = await statfs(directory);
  return { freeGiB: Math.floor((fs.bavail * fs.bsize) / GIB) };
}

async function canRun(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
