// The image header reader a host checks Url images with: which files a qcow2
// header names (backing file, external data file) and which formats that can name
// files it does not take at all (QED, VMDK), from the first bytes of the image.
import { describe, expect, it } from 'vitest';
import { imageHeaderRefusal, readImageHeader } from '../../../../controller/backends/cloud-hypervisor/image-header.js';

/** A qcow2 header of `version` (72 bytes for v2, 104 for v3), with a backing file name and incompatible features as given. */
function qcow2({
  version = 3,
  backing,
  backingOffset,
  incompatible = 0n,
}: { version?: number; backing?: string; backingOffset?: number; incompatible?: bigint } = {}): Buffer {
  const header = Buffer.alloc(version === 2 ? 72 : 104);
  header.write('QFI\xfb', 0, 'latin1');
  header.writeUInt32BE(version, 4);
  header.writeUInt32BE(16, 20); // cluster_bits
  header.writeBigUInt64BE(64n * 1024n * 1024n, 24); // size
  if (version === 3) {
    header.writeBigUInt64BE(incompatible, 72);
    header.writeUInt32BE(4, 96); // refcount_order
    header.writeUInt32BE(104, 100); // header_length
  }
  if (backing === undefined) return header;
  const name = Buffer.from(backing, 'latin1');
  const offset = backingOffset ?? header.length + 8;
  header.writeBigUInt64BE(BigInt(offset), 8);
  header.writeUInt32BE(name.length, 16);
  const image = Buffer.alloc(Math.max(offset + name.length, header.length + 8));
  header.copy(image);
  name.copy(image, offset);
  return image;
}

describe('Cloud Hypervisor image header', () => {
  it.each([
    ['a qcow2 v3 with no backing file', qcow2(), { format: 'qcow2', version: 3, externalDataFile: false }],
    ['a qcow2 v2 with no backing file', qcow2({ version: 2 }), { format: 'qcow2', version: 2, externalDataFile: false }],
    ['a qcow2 naming a backing file', qcow2({ backing: '/dev/sda' }), { format: 'qcow2', backingFile: '/dev/sda' }],
    ['a qcow2 with an external data file', qcow2({ incompatible: 0b100n }), { format: 'qcow2', externalDataFile: true }],
    ['bytes of no known format (raw)', Buffer.alloc(4096, 0), { format: 'raw' }],
    ['a raw image shorter than any header', Buffer.from('QF'), { format: 'raw' }],
    ['a QED image', Buffer.concat([Buffer.from('QED\0', 'latin1'), Buffer.alloc(60)]), { format: 'qed' }],
    ['a sparse VMDK', Buffer.concat([Buffer.from('KDMV', 'latin1'), Buffer.alloc(60)]), { format: 'vmdk' }],
    ['a VMDK descriptor', Buffer.from('# Disk DescriptorFile\n\nversion=1\nRW 2048 FLAT "/dev/sda" 0\n'), { format: 'vmdk' }],
  ])('reads %s', (_what, head, expected) => {
    expect(readImageHeader(head)).toMatchObject(expected);
  });

  it.each([
    ['a backing file, naming it', qcow2({ backing: '/dev/sda' }), /names the backing file "\/dev\/sda"/],
    [
      'a backing file beyond the bytes read, by its offset',
      qcow2({ backing: '/etc/shadow', backingOffset: 200_000 }).subarray(0, 65536),
      /names a backing file \(11 bytes at offset 200000\)/,
    ],
    ['a backing file name with control characters, shown escaped', qcow2({ backing: 'a\nb' }), /names the backing file "a\\nb"/],
    ['an external data file', qcow2({ incompatible: 0b100n }), /external data file/],
    ['a qcow2 header cut short', qcow2().subarray(0, 16), /qcow2 header cut short/],
    [
      'a qcow2 version no VMM reads',
      (() => {
        const h = qcow2();
        h.writeUInt32BE(7, 4);
        return h;
      })(),
      /qcow2 version 7/,
    ],
    ['a QED image', Buffer.concat([Buffer.from('QED\0', 'latin1'), Buffer.alloc(60)]), /QED/],
    ['a VMDK image', Buffer.from('version=1\n'), /VMDK/],
  ])('refuses %s', (_what, head, message) => {
    expect(imageHeaderRefusal(readImageHeader(head))).toMatch(message);
  });

  it.each([
    ['a qcow2 with no backing file', qcow2()],
    ['a qcow2 v2', qcow2({ version: 2 })],
    ['a raw image', Buffer.alloc(1024, 7)],
    ['an empty image', Buffer.alloc(0)],
    ['text that only mentions a VMDK version on a later line', Buffer.from('hello\nversion=1\n')],
  ])('takes %s', (_what, head) => {
    expect(imageHeaderRefusal(readImageHeader(head))).toBeUndefined();
  });
});
