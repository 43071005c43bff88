// Builds the test guest (see guest-init.ts) once per kernel version, cached
// outside the repository like the Go tools of test/tools/build.sh:
//
//   ${BANLIEUE_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/banlieue-tools}/guest-<kernel version>/
//     vmlinuz                      Debian's cloud kernel
//     initramfs-<hash>.cpio.gz     busybox + modules + scripts; <hash> covers
//                                  everything put in it, so a changed script
//                                  gets a new file instead of a stale one
//
// The kernel is the one Debian's `linux-image-cloud-amd64` meta-package points
// at; it and `busybox-static` are fetched with `apt-get download` and unpacked
// with `dpkg-deb -x` into a temporary directory: nothing is installed on the
// host. Files appear by rename, so concurrent builders never see half a file.
//
// Run directly (`npx tsx test/peers/libvirt/guest/guest-image.ts`) it prints
// the kernel and initramfs paths.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { toCpioNewc, type CpioEntry } from './cpio-newc.js';
import { GUEST_KERNEL_CMDLINE, GUEST_MODULE_ORDER_FILE, GUEST_MODULES, guestScripts } from './guest-init.js';
import { resolveModules } from './kernel-modules.js';

const run = promisify(execFile);
const KERNEL_META_PACKAGE = 'linux-image-cloud-amd64';
const BUSYBOX_PACKAGE = 'busybox-static';

export interface GuestImage {
  /** e.g. `6.1.0-57-cloud-amd64`. */
  readonly kernelVersion: string;
  /** Absolute path of the kernel (bzImage), for `-kernel` / `<kernel>`. */
  readonly kernel: string;
  /** Absolute path of the gzipped newc initramfs, for `-initrd` / `<initrd>`. */
  readonly initramfs: string;
  /** For `-append` / `<cmdline>`. */
  readonly cmdline: string;
}

/** The cache root test/tools/build.sh uses. */
export function toolsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.BANLIEUE_TOOLS_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'banlieue-tools');
}

/** The cached guest, built first if missing (a download of ~30 MB and a few seconds). */
export async function ensureGuestImage(cacheRoot: string = toolsCacheDir()): Promise<GuestImage> {
  const initramfsName = `initramfs-${inputsHash()}.cpio.gz`;
  const imageOf = (kernelVersion: string): GuestImage => ({
    kernelVersion,
    kernel: join(cacheRoot, `guest-${kernelVersion}`, 'vmlinuz'),
    initramfs: join(cacheRoot, `guest-${kernelVersion}`, initramfsName),
    cmdline: GUEST_KERNEL_CMDLINE,
  });
  const kernelPackage = await candidateKernelPackage().catch((error: unknown) => {
    // No package lists (or no apt): a guest built earlier still serves.
    const cached = cachedKernelVersions(cacheRoot).find((version) => isComplete(imageOf(version)));
    if (cached === undefined) throw error;
    return `linux-image-${cached}`;
  });
  const kernelVersion = kernelPackage.replace(/^linux-image-/, '');
  const image = imageOf(kernelVersion);
  if (isComplete(image)) return image;

  const dir = join(cacheRoot, `guest-${kernelVersion}`);
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(dir, '.build-'));
  try {
    const root = join(work, 'root');
    await download(work, [kernelPackage, BUSYBOX_PACKAGE]);
    for (const deb of readdirSync(work).filter((f) => f.endsWith('.deb'))) await run('dpkg-deb', ['-x', join(work, deb), root]);
    const initramfs = gzipSync(toCpioNewc(initramfsEntries(root, kernelVersion)));
    publish(work, image.kernel, (tmp) => copyFileSync(join(root, 'boot', `vmlinuz-${kernelVersion}`), tmp));
    publish(work, image.initramfs, (tmp) => writeFileSync(tmp, initramfs));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return image;
}

/** busybox, the modules /init loads and the scripts, from the unpacked packages in `root`. */
function initramfsEntries(root: string, kernelVersion: string): CpioEntry[] {
  const modules = resolveModules(join(root, 'lib', 'modules', kernelVersion), GUEST_MODULES);
  const directories = ['bin', 'dev', 'etc', 'etc/acpi', 'etc/acpi/PWRF', 'lib', 'lib/modules', 'mnt', 'proc', 'run', 'sys', 'tmp'];
  return [
    ...directories.map((path): CpioEntry => ({ kind: 'directory', path })),
    // The kernel opens /dev/console for /init before anything mounts devtmpfs.
    { kind: 'char-device', path: 'dev/console', major: 5, minor: 1 },
    { kind: 'file', path: 'bin/busybox', data: readFileSync(join(root, 'bin', 'busybox')), mode: 0o755 },
    { kind: 'symlink', path: 'bin/sh', target: 'busybox' },
    ...Object.entries(guestScripts()).map(([path, text]): CpioEntry => ({ kind: 'file', path, data: Buffer.from(text), mode: 0o755 })),
    ...modules.map((m): CpioEntry => ({ kind: 'file', path: `lib/modules/${m.name}.ko`, data: readFileSync(m.path) })),
    { kind: 'file', path: GUEST_MODULE_ORDER_FILE, data: Buffer.from(modules.map((m) => `${m.name}\n`).join('')) },
  ];
}

function isComplete(image: GuestImage): boolean {
  return existsSync(image.kernel) && existsSync(image.initramfs);
}

/** Kernel versions with a guest directory in the cache, newest first. */
function cachedKernelVersions(cacheRoot: string): string[] {
  if (!existsSync(cacheRoot)) return [];
  return readdirSync(cacheRoot)
    .filter((name) => name.startsWith('guest-'))
    .map((name) => name.slice('guest-'.length))
    .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
}

/** `linux-image-<version>`, the package the cloud meta-package currently depends on. */
async function candidateKernelPackage(): Promise<string> {
  const { stdout } = await run('apt-cache', ['depends', KERNEL_META_PACKAGE], { timeout: 120_000 });
  const match = /Depends: (linux-image-\S+-cloud-amd64)\b/.exec(stdout);
  if (match?.[1] === undefined) {
    throw new Error(`apt-cache depends ${KERNEL_META_PACKAGE} names no kernel (run apt-get update?):\n${stdout}`);
  }
  return match[1];
}

async function download(dir: string, packages: readonly string[]): Promise<void> {
  try {
    await run('apt-get', ['download', ...packages], { cwd: dir, timeout: 10 * 60_000, maxBuffer: 1 << 22 });
  } catch (error) {
    throw new Error(`apt-get download ${packages.join(' ')} failed: ${String(error)}`);
  }
}

/** Writes `target` through a file in the work dir (same filesystem), then renames it into place. */
function publish(work: string, target: string, write: (tmp: string) => void): void {
  if (existsSync(target)) return;
  const tmp = join(work, 'publish.tmp');
  write(tmp);
  renameSync(tmp, target);
}

/** What the initramfs is made of besides the packages: the scripts and the wanted modules. */
function inputsHash(): string {
  const hash = createHash('sha256');
  for (const [path, text] of Object.entries(guestScripts())) hash.update(`${path}\0${text}\0`);
  hash.update(GUEST_MODULES.join(','));
  return hash.digest('hex').slice(0, 12);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const image = await ensureGuestImage();
  process.stdout.write(`kernel ${image.kernelVersion} ${image.kernel}\ninitramfs ${image.kernelVersion} ${image.initramfs}\n`);
}
