// The OS disk: a qcow2 overlay whose backing file is the image, made with
// `qemu-img create -b`, of the machine's osDiskSizeGiB. Why an overlay and not
// a raw copy: creating it writes a few hundred KiB whatever the image size, so
// a pass stays short (a 10 GiB copy would hold the worker for minutes or need
// a task of its own), and N machines of one image share its blocks on any
// filesystem (a reflink needs btrfs or XFS). The price: the image must not
// change or move while machines use it (docs/cloud-hypervisor.md says so),
// and the VMM opens the backing file (`backing_files: true`).
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { runCommand } from '../host/run-command.js';

export const OS_DISK = 'os.qcow2';
const GIB = 1024 ** 3;

interface ImageInfo {
  readonly format: string;
  readonly virtualSize: number;
}

/** The image's format and virtual size (`qemu-img info`). */
export async function imageInfo(image: string): Promise<ImageInfo> {
  const { stdout } = await runCommand('qemu-img', ['info', '--output=json', image]);
  const info = JSON.parse(stdout) as { format?: string; 'virtual-size'?: number };
  if (typeof info.format !== 'string' || typeof info['virtual-size'] !== 'number') {
    throw new BackendError(BackendErrorKind.Rejected, `qemu-img info ${image} gave no format or size`);
  }
  return { format: info.format, virtualSize: info['virtual-size'] };
}

/**
 * `<diskDir>/os.qcow2`, created when absent (via a temporary name, so a crash
 * leaves no half disk under the real one). Rejected when the image is larger
 * than the disk asked for.
 */
export async function ensureOsDisk(diskDir: string, image: string, sizeGiB: number): Promise<string> {
  const path = join(diskDir, OS_DISK);
  if (await exists(path)) return path;
  await mkdir(diskDir, { recursive: true, mode: 0o700 });
  const info = await imageInfo(image);
  if (info.virtualSize > sizeGiB * GIB) {
    throw new BackendError(
      BackendErrorKind.Rejected,
      `spec.osDiskSizeGiB ${sizeGiB} is smaller than image ${image} (${Math.ceil(info.virtualSize / GIB)} GiB)`,
    );
  }
  const temporary = join(diskDir, `${OS_DISK}.tmp`);
  await rm(temporary, { force: true });
  await runCommand('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', info.format, '-b', image, temporary, String(sizeGiB * GIB)]);
  await rename(temporary, path);
  return path;
}

/**
 * Whether `<diskDir>/os.qcow2` is there. Only its absence answers false: a disk that
 * cannot be looked at (permissions, a storage gone bad) throws, as it is not known gone.
 */
export async function hasOsDisk(diskDir: string): Promise<boolean> {
  try {
    await stat(join(diskDir, OS_DISK));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Grows the overlay to `sizeGiB` (the VM must not run); never shrinks. */
export async function growOsDisk(path: string, sizeGiB: number): Promise<boolean> {
  const info = await imageInfo(path);
  if (info.virtualSize >= sizeGiB * GIB) return false;
  await runCommand('qemu-img', ['resize', '-q', path, String(sizeGiB * GIB)]);
  return true;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
