// The "newc" cpio format the kernel unpacks an initramfs from
// (Documentation/driver-api/early-userspace/buffer-format.rst), written in
// process so that building the guest needs no cpio tool, no root for device
// nodes and no file ownership games on the host.

/** One archive member; parents must come before their children. */
export type CpioEntry =
  | { readonly kind: 'directory'; readonly path: string; readonly mode?: number }
  | { readonly kind: 'file'; readonly path: string; readonly data: Uint8Array; readonly mode?: number }
  | { readonly kind: 'symlink'; readonly path: string; readonly target: string }
  | { readonly kind: 'char-device'; readonly path: string; readonly major: number; readonly minor: number; readonly mode?: number };

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

/** The archive, uncompressed (the caller gzips it), owned by root, mtime 0. */
export function toCpioNewc(entries: readonly CpioEntry[]): Buffer {
  const chunks: Buffer[] = [];
  entries.forEach((entry, i) => {
    const { mode, data, rdev } = describe(entry);
    chunks.push(member(entry.path.replace(/^\/+/, ''), i + 1, mode, data, rdev));
  });
  chunks.push(member('TRAILER!!!', 0, 0, Buffer.alloc(0), [0, 0]));
  return Buffer.concat(chunks);
}

function describe(entry: CpioEntry): { mode: number; data: Uint8Array; rdev: [number, number] } {
  switch (entry.kind) {
    case 'directory':
      return { mode: S_IFDIR | (entry.mode ?? 0o755), data: Buffer.alloc(0), rdev: [0, 0] };
    case 'file':
      return { mode: S_IFREG | (entry.mode ?? 0o644), data: entry.data, rdev: [0, 0] };
    case 'symlink':
      return { mode: S_IFLNK | 0o777, data: Buffer.from(entry.target), rdev: [0, 0] };
    case 'char-device':
      return { mode: S_IFCHR | (entry.mode ?? 0o600), data: Buffer.alloc(0), rdev: [entry.major, entry.minor] };
  }
}

/** 110-byte ASCII header, name + NUL padded to 4, data padded to 4. */
function member(name: string, inode: number, mode: number, data: Uint8Array, rdev: [number, number]): Buffer {
  const hex = (n: number): string => n.toString(16).padStart(8, '0');
  const nameBytes = Buffer.from(`${name}\0`);
  const fields = [
    inode,
    mode,
    0 /* uid */,
    0 /* gid */,
    (mode & S_IFMT) === S_IFDIR ? 2 : 1 /* nlink */,
    0 /* mtime */,
    data.length,
    0,
    0 /* dev major, minor */,
    rdev[0],
    rdev[1],
    nameBytes.length,
    0 /* check */,
  ];
  const header = Buffer.from(`070701${fields.map(hex).join('')}`, 'latin1');
  return Buffer.concat([header, nameBytes, padding(header.length + nameBytes.length), data, padding(data.length)]);
}

function padding(length: number): Buffer {
  return Buffer.alloc((4 - (length % 4)) % 4);
}
