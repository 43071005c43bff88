// The test guest (guest/) as a bootable disk image, for tests that boot it the
// way a libvirt provider boots any machine: from an OS disk (a qcow2 overlay on
// an image volume), not from a kernel given to QEMU. One ext2 filesystem over
// the whole disk holds the kernel, the initramfs and extlinux, whose boot
// sector is the disk's first sector: SeaBIOS boots it like a floppy, extlinux
// loads the kernel with `console=ttyS0`, and /init runs as in guest-init.ts.
//
// Cached beside the guest it is made from:
//   <tools cache>/guest-<kernel version>/disk-<initramfs name>.img   (raw, 64 MiB)
// extlinux comes from Debian's `extlinux` package, fetched with `apt-get
// download` and unpacked with `dpkg-deb -x` (nothing installed); its installer
// needs the filesystem mounted, so it runs in a mount namespace of its own, on
// a loop device released as the namespace ends.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { ensureGuestImage, type GuestImage } from './guest/guest-image.js';

const run = promisify(execFile);
const DISK_MIB = 64;

export interface GuestDisk extends GuestImage {
  /** The raw disk image, bootable by SeaBIOS. */
  readonly disk: string;
}

export async function ensureGuestDisk(): Promise<GuestDisk> {
  const image = await ensureGuestImage();
  const disk = join(dirname(image.initramfs), `disk-${basename(image.initramfs, '.cpio.gz')}.img`);
  if (existsSync(disk)) return { ...image, disk };
  const work = mkdtempSync(join(dirname(disk), '.disk-'));
  try {
    await run('apt-get', ['download', 'extlinux'], { cwd: work, timeout: 10 * 60_000 });
    const deb = readdirSync(work).find((f) => f.startsWith('extlinux_') && f.endsWith('.deb'));
    if (deb === undefined) throw new Error('apt-get download extlinux left no package');
    await run('dpkg-deb', ['-x', join(work, deb), join(work, 'extlinux')]);
    const boot = join(work, 'tree', 'boot');
    mkdirSync(boot, { recursive: true });
    copyFileSync(image.kernel, join(boot, 'vmlinuz'));
    copyFileSync(image.initramfs, join(boot, 'initramfs.gz'));
    writeFileSync(
      join(boot, 'extlinux.conf'),
      ['DEFAULT guest', 'PROMPT 0', 'TIMEOUT 0', 'LABEL guest', '  KERNEL /boot/vmlinuz', '  INITRD /boot/initramfs.gz', `  APPEND ${image.cmdline}`, ''].join(
        '\n',
      ),
    );
    const img = join(work, 'disk.img');
    await run('truncate', ['-s', `${DISK_MIB}M`, img]);
    await run('mke2fs', ['-q', '-t', 'ext2', '-F', '-d', join(work, 'tree'), img], { timeout: 120_000 });
    const mnt = join(work, 'mnt');
    mkdirSync(mnt);
    const install = `mount -o loop ${img} ${mnt} && ${join(work, 'extlinux', 'usr', 'bin', 'extlinux')} --install ${mnt}/boot; status=$?; umount ${mnt}; exit $status`;
    await run('unshare', ['--mount', '--propagation', 'private', '--', 'sh', '-c', install], { timeout: 120_000 });
    renameSync(img, disk);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { ...image, disk };
}
