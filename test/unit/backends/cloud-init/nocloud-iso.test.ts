import { describe, expect, it } from 'vitest';
import { toIso9660Image } from '../../../../controller/backends/cloud-init/iso9660-image.js';
import { NOCLOUD_LABEL, toNoCloudIso } from '../../../../controller/backends/cloud-init/nocloud-iso.js';

// A small ECMA-119 reader, written from the standard rather than from the
// writer, so that the two only agree when both follow it.
const SECTOR = 2048;

interface Descriptor {
  type: number;
  volumeId: string;
  escape: string;
  totalSectors: number;
  root: Record;
  lPathTable: number;
  mPathTable: number;
  pathTableSize: number;
}

interface Record {
  offset: number;
  extent: number;
  size: number;
  flags: number;
  identifier: Buffer;
  systemUse: Buffer;
}

function both32(b: Buffer, offset: number): number {
  const le = b.readUInt32LE(offset);
  expect(b.readUInt32BE(offset + 4), `both-endian value at ${offset}`).toBe(le);
  return le;
}

function readRecord(b: Buffer, offset: number): Record {
  const length = b[offset] ?? 0;
  const nameLength = b[offset + 32] ?? 0;
  const identifier = b.subarray(offset + 33, offset + 33 + nameLength);
  const systemUseStart = offset + 33 + nameLength + (nameLength % 2 === 0 ? 1 : 0);
  return {
    offset,
    extent: both32(b, offset + 2),
    size: both32(b, offset + 10),
    flags: b[offset + 25] ?? 0,
    identifier,
    systemUse: b.subarray(systemUseStart, offset + length),
  };
}

function descriptors(image: Buffer): Descriptor[] {
  const found: Descriptor[] = [];
  for (let sector = 16; ; sector++) {
    const d = image.subarray(sector * SECTOR, (sector + 1) * SECTOR);
    expect(d.toString('latin1', 1, 6)).toBe('CD001');
    if (d[0] === 255) return found;
    const joliet = d[0] === 2;
    const text = (start: number, end: number): string =>
      joliet ? Buffer.from(d.subarray(start, end)).swap16().toString('utf16le').trimEnd() : d.toString('latin1', start, end).trimEnd();
    found.push({
      type: d[0] ?? 0,
      volumeId: text(40, 72),
      escape: d.toString('latin1', 88, 91),
      totalSectors: both32(d, 80),
      root: readRecord(d, 156),
      lPathTable: d.readUInt32LE(140),
      mPathTable: d.readUInt32BE(148),
      pathTableSize: both32(d, 132),
    });
  }
}

/** Records of a directory; a zero length byte means "continue in the next sector". */
function directory(image: Buffer, root: Record): Record[] {
  const records: Record[] = [];
  const start = root.extent * SECTOR;
  let offset = start;
  while (offset < start + root.size) {
    const length = image[offset] ?? 0;
    if (length === 0) {
      offset = (Math.floor(offset / SECTOR) + 1) * SECTOR;
      continue;
    }
    expect(Math.floor(offset / SECTOR), 'record crosses a sector boundary').toBe(Math.floor((offset + length - 1) / SECTOR));
    records.push(readRecord(image, offset));
    offset += length;
  }
  return records;
}

/** SUSP entries of a record: signature → body. */
function susp(record: Record): Map<string, Buffer> {
  const entries = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 4 <= record.systemUse.length) {
    const length = record.systemUse[offset + 2] ?? 0;
    entries.set(record.systemUse.toString('latin1', offset, offset + 2), record.systemUse.subarray(offset + 4, offset + length));
    offset += length;
  }
  return entries;
}

function rockRidgeName(record: Record): string | undefined {
  return susp(record).get('NM')?.toString('latin1', 1);
}

/** UCS-2 big-endian; "." and ".." keep their one-byte identifiers (0x00, 0x01). */
function jolietName(record: Record): string {
  if (record.identifier.length === 1) return record.identifier.toString('latin1');
  return Buffer.from(record.identifier).swap16().toString('utf16le');
}

function contents(image: Buffer, record: Record): string {
  return image.toString('utf8', record.extent * SECTOR, record.extent * SECTOR + record.size);
}

function primaryAndJoliet(image: Buffer): [Descriptor, Descriptor] {
  const [primary, joliet] = descriptors(image);
  if (primary === undefined || joliet === undefined) throw new Error('expected two volume descriptors');
  return [primary, joliet];
}

const seed = {
  userData: '#cloud-config\n#banlieue-marker: hello\nhostname: guest\n',
  metaData: 'instance-id: i-123\nlocal-hostname: guest\n',
  networkConfig: 'version: 2\nethernets:\n  eth0:\n    dhcp4: true\n',
};

describe('NoCloud seed ISO', () => {
  it('has a primary descriptor, a Joliet descriptor and a terminator, both labelled cidata', () => {
    const image = toNoCloudIso(seed);
    const [primary, joliet] = primaryAndJoliet(image);

    expect(descriptors(image)).toHaveLength(2);
    expect(primary).toMatchObject({ type: 1, volumeId: 'cidata', totalSectors: image.length / SECTOR });
    expect(joliet).toMatchObject({ type: 2, volumeId: 'cidata', escape: '%/E', totalSectors: image.length / SECTOR });
    expect(NOCLOUD_LABEL).toBe('cidata');
    expect(image.length % SECTOR).toBe(0);
  });

  it('leaves the 16 sectors of the system area empty', () => {
    expect(
      toNoCloudIso(seed)
        .subarray(0, 16 * SECTOR)
        .every((byte) => byte === 0),
    ).toBe(true);
  });

  it('marks Rock Ridge in the root "." record with SP first and an RRIP_1991A ER entry', () => {
    const image = toNoCloudIso(seed);
    const [primary] = primaryAndJoliet(image);
    const dot = directory(image, primary.root)[0];
    if (dot === undefined) throw new Error('empty root');

    expect(dot.identifier).toEqual(Buffer.of(0));
    expect(dot.systemUse.toString('latin1', 0, 2)).toBe('SP');
    expect(susp(dot).get('SP')).toEqual(Buffer.of(0xbe, 0xef, 0));
    const er = susp(dot).get('ER');
    expect(er?.toString('latin1', 4, 4 + (er[0] ?? 0))).toBe('RRIP_1991A');
  });

  it.each([
    ['user-data', seed.userData],
    ['meta-data', seed.metaData],
    ['network-config', seed.networkConfig],
  ])('carries %s under its Rock Ridge and its Joliet name, with the same bytes', (name, text) => {
    const image = toNoCloudIso(seed);
    const [primary, joliet] = primaryAndJoliet(image);
    const rock = directory(image, primary.root).find((r) => rockRidgeName(r) === name);
    const jol = directory(image, joliet.root).find((r) => jolietName(r) === `${name};1`);

    expect(rock && contents(image, rock)).toBe(text);
    expect(jol && contents(image, jol)).toBe(text);
    expect(jol?.extent).toBe(rock?.extent);
  });

  it('gives files level-1 primary names, sorted, after "." and ".."', () => {
    const image = toNoCloudIso({ ...seed, vendorData: '#cloud-config\n' });
    const [primary] = primaryAndJoliet(image);
    const names = directory(image, primary.root).map((r) => r.identifier.toString('latin1'));

    expect(names).toEqual(['\x00', '\x01', 'META_DAT.;1', 'NETWORK_.;1', 'USER_DAT.;1', 'VENDOR_D.;1']);
  });

  it('gives files read-only regular modes and the root a directory mode', () => {
    const image = toNoCloudIso(seed);
    const [primary] = primaryAndJoliet(image);
    const [dot, , file] = directory(image, primary.root);
    const mode = (r: Record | undefined): number | undefined => r && susp(r).get('PX')?.readUInt32LE(0);

    expect(mode(dot)).toBe(0o40555);
    expect(mode(file)).toBe(0o100444);
    expect(dot?.flags).toBe(2);
    expect(file?.flags).toBe(0);
  });

  it('writes no network-config or vendor-data file unless given', () => {
    const image = toNoCloudIso({ userData: seed.userData, metaData: '' });
    const [primary] = primaryAndJoliet(image);
    const names = directory(image, primary.root)
      .map(rockRidgeName)
      .filter((n) => n !== undefined);

    expect(names.sort()).toEqual(['meta-data', 'user-data']);
  });

  it('writes an empty meta-data file as a zero-length record', () => {
    const image = toNoCloudIso({ userData: 'x', metaData: '' });
    const [primary] = primaryAndJoliet(image);
    const meta = directory(image, primary.root).find((r) => rockRidgeName(r) === 'meta-data');

    expect(meta?.size).toBe(0);
  });

  it('points both path tables of each descriptor at its root directory', () => {
    const image = toNoCloudIso(seed);
    for (const d of primaryAndJoliet(image)) {
      const l = image.subarray(d.lPathTable * SECTOR);
      const m = image.subarray(d.mPathTable * SECTOR);

      expect(d.pathTableSize).toBe(10);
      expect([l[0], l.readUInt32LE(2), l.readUInt16LE(6), l[8]]).toEqual([1, d.root.extent, 1, 0]);
      expect([m[0], m.readUInt32BE(2), m.readUInt16BE(6), m[8]]).toEqual([1, d.root.extent, 1, 0]);
    }
  });

  it('ends in 150 zero sectors inside the volume, so fixed-window readers (busybox findfs) find the label', () => {
    const image = toNoCloudIso(seed);
    const [primary] = primaryAndJoliet(image);

    expect(image.length).toBeGreaterThanOrEqual(0x11000);
    expect(primary.totalSectors * SECTOR).toBe(image.length);
    expect(image.subarray(image.length - 150 * SECTOR).every((byte) => byte === 0)).toBe(true);
  });

  it('is a pure function of the seed', () => {
    expect(toNoCloudIso(seed).equals(toNoCloudIso({ ...seed }))).toBe(true);
  });

  it('accepts bytes as well as strings', () => {
    const image = toNoCloudIso({ userData: Buffer.from([0, 1, 2, 255]), metaData: '' });
    const [primary] = primaryAndJoliet(image);
    const user = directory(image, primary.root).find((r) => rockRidgeName(r) === 'user-data');

    expect(user && image.subarray(user.extent * SECTOR, user.extent * SECTOR + user.size)).toEqual(Buffer.from([0, 1, 2, 255]));
  });
});

describe('ISO 9660 image', () => {
  it('continues a directory in the next sector rather than splitting a record', () => {
    const files = Array.from({ length: 60 }, (_, i) => ({ name: `file-${String(i).padStart(2, '0')}-with-a-long-name`, data: Buffer.from(`#${i}`) }));
    // 60 files do not fit one 8.3 namespace; give each a distinct first 8 characters.
    const named = files.map((f, i) => ({ ...f, name: `f${String(i).padStart(3, '0')}${f.name}` }));
    const image = toIso9660Image({ volumeId: 'MANY', files: named });
    const [primary, joliet] = primaryAndJoliet(image);

    expect(primary.root.size).toBeGreaterThan(SECTOR);
    for (const d of [primary, joliet]) expect(directory(image, d.root)).toHaveLength(62);
    const last = directory(image, primary.root).find((r) => rockRidgeName(r) === named[59]?.name);
    expect(last && contents(image, last)).toBe('#59');
  });

  it('records the given date in the descriptors and the directory records', () => {
    const recordedAt = new Date(Date.UTC(2026, 10, 30, 12, 34, 56));
    const image = toIso9660Image({ volumeId: 'DATED', files: [{ name: 'a', data: Buffer.from('a') }], recordedAt });
    const [primary] = primaryAndJoliet(image);
    const pvd = image.subarray(16 * SECTOR);

    expect(pvd.toString('latin1', 813, 829)).toBe('2026113012345600');
    expect([...image.subarray(primary.root.extent * SECTOR + 18, primary.root.extent * SECTOR + 25)]).toEqual([126, 11, 30, 12, 34, 56, 0]);
  });

  it.each([
    ['a name with a slash', { volumeId: 'X', files: [{ name: 'a/b', data: Buffer.alloc(0) }] }, /file name "a\/b"/],
    [
      'two names with one 8.3 form',
      {
        volumeId: 'X',
        files: [
          { name: 'user-data', data: Buffer.alloc(0) },
          { name: 'user_data', data: Buffer.alloc(0) },
        ],
      },
      /both map to the ISO 9660 name USER_DAT\.;1/,
    ],
    ['a label longer than Joliet allows', { volumeId: 'a-label-of-17-chr', files: [] }, /volumeId "a-label-of-17-chr"/],
    ['an empty label', { volumeId: '', files: [] }, /volumeId ""/],
  ])('refuses %s', (_, props, message) => {
    expect(() => toIso9660Image(props)).toThrow(message);
  });
});
