// What the host keeps of a machine beside its VMM, in the machine's state
// directory: `machine.json` (the ownership mark, the VmConfig a dead VMM is
// started again from, the OS disk's directory and the taps, so a deletion
// finds everything even when the spec changed; when a deletion began, so the
// sweep may finish one a crash cut short; once released, the mark it had
// instead of the mark), and the two power records:
// `power-button` (when the ACPI button was pressed: the power-off deadline
// runs from it, across passes and provider restarts) and `powered-off` (the
// VMM was stopped by banlieue, not killed behind its back).
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { VmConfig } from '../client/vmm-types.js';
import type { VmmPaths } from '../state-dir.js';

export interface MachineRecord {
  /** ownerMark of the machine that created it; absent once released (deletionPolicy Retain). */
  readonly owner?: string;
  /** The mark it had, once released: nothing adopts by it (ownership.ts `decideRelease`). */
  readonly releasedFrom?: string;
  /**
   * Written by the machine's deletion before it touches anything (a tombstone): only what a
   * deletion began is ever removed by the sweep (sweep.ts).
   */
  readonly deletionStartedAt?: string;
  readonly config: VmConfig;
  /** The image file the OS disk overlays. */
  readonly image: string;
  /** `<storage class directory>/<uuid>`: the OS disk's directory. */
  readonly diskDir: string;
  /** The size the OS disk was made or last grown to. */
  readonly osDiskSizeGiB: number;
  readonly taps: readonly { readonly name: string; readonly bridge: string }[];
}

/** A machine's state directory and its record: a VM as the machine recipe hands it to a step. */
export interface ChVm {
  readonly paths: VmmPaths;
  readonly record: MachineRecord;
}

const RECORD = 'machine.json';
const POWER_BUTTON = 'power-button';
const POWERED_OFF = 'powered-off';
const SEED = 'seed.iso';

export function seedPath(paths: VmmPaths): string {
  return join(paths.dir, SEED);
}

/** The record, or undefined when the directory has none. */
export async function readRecord(paths: VmmPaths): Promise<MachineRecord | undefined> {
  const text = await readOptional(join(paths.dir, RECORD));
  return text === undefined ? undefined : (JSON.parse(text) as MachineRecord);
}

/** Written by rename: a reader sees the old record or the new one. */
export async function writeRecord(paths: VmmPaths, record: MachineRecord): Promise<void> {
  await writeAtomically(join(paths.dir, RECORD), `${JSON.stringify(record, undefined, 2)}\n`);
}

/** When the power button was pressed for the power-off in progress; undefined when none is. */
export async function readPowerButton(paths: VmmPaths): Promise<Date | undefined> {
  const text = await readOptional(join(paths.dir, POWER_BUTTON));
  const at = text === undefined ? NaN : Date.parse(text.trim());
  return Number.isNaN(at) ? undefined : new Date(at);
}

export async function writePowerButton(paths: VmmPaths, at: Date): Promise<void> {
  await writeAtomically(join(paths.dir, POWER_BUTTON), `${at.toISOString()}\n`);
}

export async function clearPowerButton(paths: VmmPaths): Promise<void> {
  await rm(join(paths.dir, POWER_BUTTON), { force: true });
}

/** True when banlieue stopped the VMM (a power-off), so its absence is no crash. */
export async function isPoweredOff(paths: VmmPaths): Promise<boolean> {
  return (await readOptional(join(paths.dir, POWERED_OFF))) !== undefined;
}

export async function setPoweredOff(paths: VmmPaths, off: boolean): Promise<void> {
  if (off) await writeAtomically(join(paths.dir, POWERED_OFF), `${new Date().toISOString()}\n`);
  else await rm(join(paths.dir, POWERED_OFF), { force: true });
}

export async function writeAtomically(path: string, data: string | Uint8Array): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, data, { mode: 0o600 });
  await rename(temporary, path);
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
