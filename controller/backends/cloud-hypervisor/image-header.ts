// What the first bytes of a downloaded image say about the files it would have
// the host open. The OS disk overlays the image and the VMM opens its backing
// chain (`backing_files: true`), so a qcow2 image whose header names a backing
// file (`/dev/sda`) would give a guest the host's disk; an external data file
// does the same. QED images name backing files and VMDK images name extents:
// the VMM boots neither, and qemu-img would open what they name, so they are
// refused too. Everything else is taken as raw, as QEMU's format probe does.
// Layouts: qcow2 (QEMU docs/interop/qcow2.txt, header fields big-endian), QED
// (magic "QED\0"), VMDK (magic "KDMV"/"COWD", or a text descriptor as QEMU's
// vmdk_probe reads it).

/** How many bytes of an image are read for its header: a qcow2 backing file name sits in its first cluster (64 KiB by default). */
export const IMAGE_HEADER_BYTES = 64 * 1024;

export type ImageHeader =
  | { readonly format: 'raw' | 'qed' | 'vmdk' }
  | {
      readonly format: 'qcow2';
      readonly version: number;
      /** The backing file named, when its bytes are among those read. */
      readonly backingFile?: string;
      /** Where and how long the backing file name is; both 0 when none is named. */
      readonly backingFileOffset: bigint;
      readonly backingFileSize: number;
      /** Incompatible feature bit 2: the guest's data lives in a file the header extension names. */
      readonly externalDataFile: boolean;
    }
  | { readonly format: 'qcow2'; readonly truncated: true };

const QCOW2_MAGIC = 0x514649fb; // "QFI\xfb"
const QCOW2_V3_FEATURES_END = 80;
const QCOW2_EXTERNAL_DATA_FILE = 1n << 2n;
const MAX_BACKING_NAME = 1023; // QEMU refuses longer names

/** The format of `head` (an image's first bytes) and, for qcow2, the files its header names. */
export function readImageHeader(head: Uint8Array): ImageHeader {
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const magic = bytes.subarray(0, 4).toString('latin1');
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === QCOW2_MAGIC) return readQcow2(bytes);
  if (magic === 'QED\0') return { format: 'qed' };
  if (magic === 'KDMV' || magic === 'COWD' || isVmdkDescriptor(bytes)) return { format: 'vmdk' };
  return { format: 'raw' };
}

/** Why the host does not take an image of this header, or undefined when it does. */
export function imageHeaderRefusal(header: ImageHeader): string | undefined {
  switch (header.format) {
    case 'raw':
      return undefined;
    case 'qed':
      return 'is a QED image, which can name a backing file on the host; only raw and qcow2 images are taken';
    case 'vmdk':
      return 'is a VMDK image, which can name extent files on the host; only raw and qcow2 images are taken';
    case 'qcow2':
      if ('truncated' in header) return 'has a qcow2 header cut short';
      if (header.version !== 2 && header.version !== 3) return `has qcow2 version ${header.version}, not 2 or 3`;
      if (header.backingFile !== undefined) return `names the backing file ${JSON.stringify(shown(header.backingFile))} in its qcow2 header`;
      if (header.backingFileOffset !== 0n || header.backingFileSize !== 0) {
        return `names a backing file (${header.backingFileSize} bytes at offset ${header.backingFileOffset}) in its qcow2 header`;
      }
      if (header.externalDataFile) return 'keeps its data in an external data file its qcow2 header names';
      return undefined;
  }
}

function readQcow2(bytes: Buffer): ImageHeader {
  if (bytes.length < 20) return { format: 'qcow2', truncated: true };
  const version = bytes.readUInt32BE(4);
  if (version >= 3 && bytes.length < QCOW2_V3_FEATURES_END) return { format: 'qcow2', truncated: true };
  const backingFileOffset = bytes.readBigUInt64BE(8);
  const backingFileSize = bytes.readUInt32BE(16);
  const externalDataFile = version >= 3 && (bytes.readBigUInt64BE(72) & QCOW2_EXTERNAL_DATA_FILE) !== 0n;
  const end = backingFileOffset + BigInt(backingFileSize);
  const named = backingFileOffset !== 0n && backingFileSize > 0 && backingFileSize <= MAX_BACKING_NAME && end <= BigInt(bytes.length);
  return {
    format: 'qcow2',
    version,
    backingFileOffset,
    backingFileSize,
    externalDataFile,
    ...(named ? { backingFile: bytes.subarray(Number(backingFileOffset), Number(end)).toString('latin1') } : {}),
  };
}

/**
 * A VMDK text descriptor as QEMU probes one: comment lines and blank lines, then
 * `version=1`, `2` or `3` on a line of its own. (QEMU takes only blank lines made of
 * spaces; an empty line is taken here too, which refuses more, never less.)
 */
function isVmdkDescriptor(bytes: Buffer): boolean {
  const text = bytes.subarray(0, 2048).toString('latin1');
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || /^ *\r?$/.test(line)) continue;
    return /^version=[123]\r?$/.test(line);
  }
  return false;
}

/** A name from an untrusted header, cut short and printable: it ends up in a status message. */
function shown(name: string): string {
  return name.length > 200 ? `${name.slice(0, 200)}…` : name;
}
