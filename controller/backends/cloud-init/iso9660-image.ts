// An ISO 9660 (ECMA-119) image of one flat directory, written in process: no
// xorriso/genisoimage on the provider's host, and no maintained npm writer
// exists. The layout is what `genisoimage -J -r` makes for a handful of files,
// because that is what cloud-init documents for NoCloud seeds:
//
//   sectors 0-15   system area (zeros)
//   16             primary volume descriptor (level-1 8.3 names + Rock Ridge)
//   17             Joliet supplementary volume descriptor (UCS-2 names)
//   18             volume descriptor set terminator
//   19-22          path tables: primary L and M, Joliet L and M
//   23…            primary root directory, Joliet root directory, file data
//   last 150       zero padding (see PADDING_SECTORS)
//
// Both name extensions are needed for readers to see lowercase names with
// dashes (`user-data`): plain ISO 9660 allows only A-Z 0-9 _ in 8.3 names.
// Linux isofs uses Rock Ridge when the root's "." record carries an ER entry
// (else Joliet); Windows and libarchive read Joliet; both trees share the file
// extents. Only a root directory: NoCloud and config-drive seeds are flat.

const SECTOR = 2048;
const SYSTEM_AREA_SECTORS = 16;
const PRIMARY_DESCRIPTOR = SYSTEM_AREA_SECTORS;
const JOLIET_DESCRIPTOR = SYSTEM_AREA_SECTORS + 1;
const TERMINATOR = SYSTEM_AREA_SECTORS + 2;
/** Primary L, primary M, Joliet L, Joliet M: one sector each. */
const PATH_TABLES = [SYSTEM_AREA_SECTORS + 3, SYSTEM_AREA_SECTORS + 4, SYSTEM_AREA_SECTORS + 5, SYSTEM_AREA_SECTORS + 6] as const;
const FIRST_DIRECTORY_SECTOR = SYSTEM_AREA_SECTORS + 7;
const MAX_FILE_SIZE = 0xffff_ffff;
/**
 * Zero sectors after the data, inside the volume, as genisoimage's default
 * `-pad`: readers that fetch a fixed window at the start (busybox's volume_id,
 * behind `findfs LABEL=cidata`, reads 0x11000 bytes and fails on anything
 * shorter) and CD-ROM read-ahead past the last file both need them.
 */
const PADDING_SECTORS = 150;
/** File names both trees can carry as-is (Joliet allows 64 UCS-2 characters). */
const PORTABLE_NAME = /^[A-Za-z0-9._-]{1,64}$/;

/** One file of the image's root directory. */
export interface IsoFile {
  /** Its name as readers show it (Rock Ridge and Joliet), e.g. `user-data`. */
  readonly name: string;
  readonly data: Uint8Array;
}

export interface Iso9660ImageProps {
  /**
   * The volume identifier (what `blkid` calls LABEL), written verbatim in the
   * primary and the Joliet descriptor: at most 16 printable ASCII characters.
   */
  readonly volumeId: string;
  readonly files: readonly IsoFile[];
  /**
   * Recording date of the volume and every record. The image is otherwise a
   * pure function of its files, so the default keeps it so.
   * @default "not specified" (ECMA-119 zero dates)
   */
  readonly recordedAt?: Date;
}

/** The image as bytes, a multiple of 2048. Throws on a name or label it cannot carry. */
export function toIso9660Image(props: Iso9660ImageProps): Buffer {
  checkVolumeId(props.volumeId);
  const files = props.files.map((file) => ({ ...file, primaryName: toPrimaryName(file.name) }));
  checkNames(files);
  const date = props.recordedAt;

  // Record lengths do not depend on extents, so lay the directories out with
  // placeholder extents first, then write them for real.
  const primarySectors = sectorsOf(primaryRecords(files, [], 0, 0, date));
  const jolietSectors = sectorsOf(jolietRecords(files, [], 0, 0, date));
  const primaryRoot = FIRST_DIRECTORY_SECTOR;
  const jolietRoot = primaryRoot + primarySectors;
  const extents: number[] = [];
  let next = jolietRoot + jolietSectors;
  for (const file of files) {
    extents.push(file.data.length === 0 ? 0 : next);
    next += Math.ceil(file.data.length / SECTOR);
  }
  const totalSectors = next + PADDING_SECTORS;

  const image = Buffer.alloc(totalSectors * SECTOR);
  const at = (sector: number): number => sector * SECTOR;
  const primaryDir = layOut(primaryRecords(files, extents, primaryRoot, primarySectors, date));
  const jolietDir = layOut(jolietRecords(files, extents, jolietRoot, jolietSectors, date));
  const [primaryL, primaryM, jolietL, jolietM] = PATH_TABLES;
  volumeDescriptor(1, props.volumeId, totalSectors, primaryL, primaryM, rootRecord(primaryRoot, primarySectors, date), date).copy(
    image,
    at(PRIMARY_DESCRIPTOR),
  );
  volumeDescriptor(2, props.volumeId, totalSectors, jolietL, jolietM, rootRecord(jolietRoot, jolietSectors, date), date).copy(image, at(JOLIET_DESCRIPTOR));
  terminator().copy(image, at(TERMINATOR));
  pathTable(primaryRoot, 'LE').copy(image, at(primaryL));
  pathTable(primaryRoot, 'BE').copy(image, at(primaryM));
  pathTable(jolietRoot, 'LE').copy(image, at(jolietL));
  pathTable(jolietRoot, 'BE').copy(image, at(jolietM));
  primaryDir.copy(image, at(primaryRoot));
  jolietDir.copy(image, at(jolietRoot));
  files.forEach((file, i) => image.set(file.data, at(extents[i] ?? 0)));
  return image;
}

interface NamedFile extends IsoFile {
  readonly primaryName: string;
}

/** Level 1: 8.3 of d-characters plus version, e.g. `user-data` → `USER_DAT.;1`. */
function toPrimaryName(name: string): string {
  const dChars = (s: string): string => s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
  const dot = name.lastIndexOf('.');
  const base = dot > 0 ? name.slice(0, dot) : name;
  const extension = dot > 0 ? name.slice(dot + 1) : '';
  return `${dChars(base).slice(0, 8)}.${dChars(extension).slice(0, 3)};1`;
}

function checkVolumeId(volumeId: string): void {
  if (!/^[\x20-\x7e]{1,16}$/.test(volumeId)) {
    throw new Error(`volumeId "${volumeId}" must be 1-16 printable ASCII characters`);
  }
}

function checkNames(files: readonly NamedFile[]): void {
  const seen = new Map<string, string>();
  for (const file of files) {
    if (!PORTABLE_NAME.test(file.name) || file.name === '.' || file.name === '..') {
      throw new Error(`file name "${file.name}" must be 1-64 of A-Z a-z 0-9 . _ -`);
    }
    if (file.data.length > MAX_FILE_SIZE) throw new Error(`file "${file.name}" is larger than 4 GiB - 1`);
    const other = seen.get(file.primaryName);
    if (other !== undefined) {
      throw new Error(`files "${other}" and "${file.name}" both map to the ISO 9660 name ${file.primaryName}`);
    }
    seen.set(file.primaryName, file.name);
  }
}

// --- directories ---------------------------------------------------------

const FLAG_DIRECTORY = 2;

interface DirectoryEntry {
  readonly extent: number;
  readonly size: number;
  readonly flags: number;
  /** The file identifier bytes (0x00 is ".", 0x01 is ".."). */
  readonly identifier: Buffer;
  readonly systemUse?: Buffer;
}

/** ".", "..", then the files sorted by identifier (ECMA-119 9.3). */
function primaryRecords(files: readonly NamedFile[], extents: readonly number[], root: number, sectors: number, date?: Date): Buffer[] {
  const self = { extent: root, size: sectors * SECTOR, flags: FLAG_DIRECTORY };
  const entries = files
    .map((file, i) => ({
      extent: extents[i] ?? 0,
      size: file.data.length,
      flags: 0,
      identifier: Buffer.from(file.primaryName, 'latin1'),
      systemUse: Buffer.concat([rrEntry(), nmEntry(file.name), pxEntry(0o100444)]),
    }))
    .sort((a, b) => Buffer.compare(a.identifier, b.identifier));
  return [
    // SP first in the root's "." record marks SUSP; ER there is what makes
    // Linux prefer Rock Ridge over Joliet (fs/isofs/inode.c, s_rock == 1).
    { ...self, identifier: Buffer.of(0), systemUse: Buffer.concat([spEntry(), rrEntry(), pxEntry(0o40555), erEntry()]) },
    { ...self, identifier: Buffer.of(1), systemUse: pxEntry(0o40555) },
    ...entries,
  ].map((entry) => directoryRecord(entry, date));
}

/** Joliet names are UCS-2 big-endian, with the ";1" genisoimage writes. */
function jolietRecords(files: readonly NamedFile[], extents: readonly number[], root: number, sectors: number, date?: Date): Buffer[] {
  const self = { extent: root, size: sectors * SECTOR, flags: FLAG_DIRECTORY };
  const entries = files
    .map((file, i) => ({ extent: extents[i] ?? 0, size: file.data.length, flags: 0, identifier: ucs2(`${file.name};1`) }))
    .sort((a, b) => Buffer.compare(a.identifier, b.identifier));
  return [{ ...self, identifier: Buffer.of(0) }, { ...self, identifier: Buffer.of(1) }, ...entries].map((entry) => directoryRecord(entry, date));
}

/** ECMA-119 9.1; padded to an even length. */
function directoryRecord(entry: DirectoryEntry, date?: Date): Buffer {
  const systemUse = entry.systemUse ?? Buffer.alloc(0);
  const namePad = entry.identifier.length % 2 === 0 ? 1 : 0;
  const length = 33 + entry.identifier.length + namePad + systemUse.length;
  if (length > 255) throw new Error(`directory record of ${length} bytes exceeds 255`);
  const record = Buffer.alloc(length + (length % 2));
  record[0] = record.length;
  both32(entry.extent).copy(record, 2);
  both32(entry.size).copy(record, 10);
  recordDate(date).copy(record, 18);
  record[25] = entry.flags;
  both16(1).copy(record, 28); // volume sequence number
  record[32] = entry.identifier.length;
  entry.identifier.copy(record, 33);
  systemUse.copy(record, 33 + entry.identifier.length + namePad);
  return record;
}

/** The root record as embedded in a volume descriptor (34 bytes, no system use). */
function rootRecord(extent: number, sectors: number, date?: Date): Buffer {
  return directoryRecord({ extent, size: sectors * SECTOR, flags: FLAG_DIRECTORY, identifier: Buffer.of(0) }, date);
}

/** A record may not cross a sector boundary (ECMA-119 6.8.1.1): pad to the next one. */
function layOut(records: readonly Buffer[]): Buffer {
  const chunks: Buffer[] = [];
  let used = 0;
  for (const record of records) {
    const room = SECTOR - (used % SECTOR);
    if (record.length > room) {
      chunks.push(Buffer.alloc(room));
      used += room;
    }
    chunks.push(record);
    used += record.length;
  }
  chunks.push(Buffer.alloc((SECTOR - (used % SECTOR)) % SECTOR));
  return Buffer.concat(chunks);
}

function sectorsOf(records: readonly Buffer[]): number {
  return layOut(records).length / SECTOR;
}

// --- SUSP / Rock Ridge (RRIP 1.09, as genisoimage -r) ----------------------

function suspEntry(signature: string, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from(signature, 'latin1'), Buffer.of(4 + body.length, 1), body]);
}

/** SUSP "SP": check bytes BE EF, no bytes skipped. */
function spEntry(): Buffer {
  return suspEntry('SP', Buffer.of(0xbe, 0xef, 0));
}

/** RRIP 1.09 "RR": which entries follow (PX 0x01, NM 0x08); Linux stops at an RR without NM. */
function rrEntry(): Buffer {
  return suspEntry('RR', Buffer.of(0x01 | 0x08));
}

/** "PX": mode, links, uid, gid; everything readable by anyone, owned by root. */
function pxEntry(mode: number): Buffer {
  return suspEntry('PX', Buffer.concat([both32(mode), both32(1), both32(0), both32(0)]));
}

function nmEntry(name: string): Buffer {
  return suspEntry('NM', Buffer.concat([Buffer.of(0), Buffer.from(name, 'latin1')]));
}

/** "ER" naming RRIP_1991A, with short texts so that "." stays under 255 bytes. */
function erEntry(): Buffer {
  const id = Buffer.from('RRIP_1991A', 'latin1');
  const description = Buffer.from('ROCK RIDGE INTERCHANGE PROTOCOL', 'latin1');
  const source = Buffer.from('IEEE P1282', 'latin1');
  return suspEntry('ER', Buffer.concat([Buffer.of(id.length, description.length, source.length, 1), id, description, source]));
}

// --- volume descriptors and path tables ----------------------------------

/** ECMA-119 8.4 (type 1) or a Joliet 8.5 descriptor (type 2, UCS-2 level 3 escape). */
function volumeDescriptor(type: 1 | 2, volumeId: string, totalSectors: number, lPathTable: number, mPathTable: number, root: Buffer, date?: Date): Buffer {
  const joliet = type === 2;
  const text = (value: string, length: number): Buffer => (joliet ? ucs2Padded(value, length) : asciiPadded(value, length));
  const d = Buffer.alloc(SECTOR);
  d[0] = type;
  d.write('CD001', 1, 'latin1');
  d[6] = 1;
  text('', 32).copy(d, 8); // system identifier
  text(volumeId, 32).copy(d, 40);
  both32(totalSectors).copy(d, 80);
  if (joliet) d.write('%/E', 88, 'latin1');
  both16(1).copy(d, 120); // volume set size
  both16(1).copy(d, 124); // volume sequence number
  both16(SECTOR).copy(d, 128);
  both32(PATH_TABLE_SIZE).copy(d, 132);
  d.writeUInt32LE(lPathTable, 140);
  d.writeUInt32BE(mPathTable, 148);
  root.copy(d, 156);
  for (const [offset, length] of [
    [190, 128],
    [318, 128],
    [446, 128],
    [574, 128],
    [702, 37],
    [739, 37],
    [776, 37],
  ] as const) {
    text('', length).copy(d, offset); // set, publisher, preparer, application, copyright, abstract, bibliography
  }
  const when = volumeDate(date);
  when.copy(d, 813); // creation
  when.copy(d, 830); // modification
  volumeDate(undefined).copy(d, 847); // expiration
  volumeDate(undefined).copy(d, 864); // effective
  d[881] = 1; // file structure version
  return d;
}

function terminator(): Buffer {
  const d = Buffer.alloc(SECTOR);
  d[0] = 255;
  d.write('CD001', 1, 'latin1');
  d[6] = 1;
  return d;
}

/** One entry: the root (identifier 0x00, parent 1), padded to even. */
const PATH_TABLE_SIZE = 10;

function pathTable(rootExtent: number, order: 'LE' | 'BE'): Buffer {
  const t = Buffer.alloc(PATH_TABLE_SIZE);
  t[0] = 1;
  if (order === 'LE') {
    t.writeUInt32LE(rootExtent, 2);
    t.writeUInt16LE(1, 6);
  } else {
    t.writeUInt32BE(rootExtent, 2);
    t.writeUInt16BE(1, 6);
  }
  return t;
}

// --- encodings -----------------------------------------------------------

function both16(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt16LE(value, 0);
  b.writeUInt16BE(value, 2);
  return b;
}

function both32(value: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32LE(value, 0);
  b.writeUInt32BE(value, 4);
  return b;
}

function asciiPadded(value: string, length: number): Buffer {
  return Buffer.from(value.padEnd(length, ' ').slice(0, length), 'latin1');
}

function ucs2(value: string): Buffer {
  return Buffer.from(value, 'utf16le').swap16();
}

function ucs2Padded(value: string, length: number): Buffer {
  return ucs2(value.padEnd(length / 2, ' ').slice(0, Math.floor(length / 2))).subarray(0, length);
}

/** ECMA-119 9.1.5: years since 1900, month, day, h, m, s, offset (UTC). */
function recordDate(date?: Date): Buffer {
  if (date === undefined) return Buffer.alloc(7);
  return Buffer.of(date.getUTCFullYear() - 1900, date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), 0);
}

/** ECMA-119 8.4.26.1: "YYYYMMDDHHMMSScc" and an offset byte; all "0" is unspecified. */
function volumeDate(date?: Date): Buffer {
  const b = Buffer.alloc(17);
  if (date === undefined) {
    b.write('0'.repeat(16), 0, 'latin1');
    return b;
  }
  const two = (n: number): string => String(n).padStart(2, '0');
  const digits =
    `${String(date.getUTCFullYear()).padStart(4, '0')}${two(date.getUTCMonth() + 1)}${two(date.getUTCDate())}` +
    `${two(date.getUTCHours())}${two(date.getUTCMinutes())}${two(date.getUTCSeconds())}${two(Math.floor(date.getUTCMilliseconds() / 10))}`;
  b.write(digits, 0, 'latin1');
  return b;
}
