// The XDR codec and message framing: byte-exact against RFC 4506 and
// virnetprotocol.x, and robust to messages split or joined by the transport.
import { describe, expect, it } from 'vitest';
import { FrameDecoder, MessageStatus, MessageType, encodeMessage } from '../../../../controller/backends/libvirt/client/framing.js';
import { uuidFromBytes, uuidToBytes } from '../../../../controller/backends/libvirt/client/handles.js';
import { remoteNonnullDomain, remoteString } from '../../../../controller/backends/libvirt/client/remote-types.js';
import { XdrError, XdrReader, XdrWriter } from '../../../../controller/backends/libvirt/client/xdr.js';
import type { XdrType } from '../../../../controller/backends/libvirt/client/xdr-schema.js';

function bytes<T>(type: XdrType<T>, value: T): string {
  const writer = new XdrWriter();
  type.encode(writer, value);
  return writer.toBuffer().toString('hex');
}

const header = { prog: 0x20008086, vers: 1, proc: 23, type: MessageType.Call, serial: 7, status: MessageStatus.Ok };

describe('libvirt XDR', () => {
  it.each([
    ['absent optional string', remoteString, undefined, '00000000'],
    ['present optional string, padded', remoteString, 'abcde', '00000001' + '00000005' + '6162636465000000'],
  ] as const)('encodes an %s', (_what, type, value, hex) => {
    expect(bytes(type as XdrType<string | undefined>, value)).toBe(hex);
  });

  it('round-trips a domain handle', () => {
    const domain = { name: 'vm-1', uuid: uuidToBytes('6695eb01-f6a4-8304-79aa-97f2502e193f'), id: -1 };
    const writer = new XdrWriter();
    remoteNonnullDomain.encode(writer, domain);
    const reader = new XdrReader(writer.toBuffer());
    expect(remoteNonnullDomain.decode(reader)).toEqual(domain);
    expect(reader.remaining).toBe(0);
    expect(uuidFromBytes(domain.uuid)).toBe('6695eb01-f6a4-8304-79aa-97f2502e193f');
  });

  it('refuses data that ends early or pads with non-zero bytes', () => {
    expect(() => remoteString.decode(new XdrReader(Buffer.from('0000000100000005616263', 'hex')))).toThrow(XdrError);
    expect(() => remoteString.decode(new XdrReader(Buffer.from('00000001000000016101', 'hex').subarray(0, 12)))).toThrow(XdrError);
    expect(() => remoteString.decode(new XdrReader(Buffer.from('000000010000000161010000', 'hex')))).toThrow(/padding/);
  });

  it('frames a message with a length that counts itself and the 24-byte header', () => {
    const message = encodeMessage(header, Buffer.from('abcd'));
    expect(message.readUInt32BE(0)).toBe(32);
    expect(message.subarray(4, 28).toString('hex')).toBe('20008086' + '00000001' + '00000017' + '00000000' + '00000007' + '00000000');
  });

  it('splits a byte stream into messages however the transport cuts it', () => {
    const one = encodeMessage(header, Buffer.from('abcd'));
    const two = encodeMessage({ ...header, serial: 8 }, Buffer.alloc(0));
    const stream = Buffer.concat([one, two]);
    for (const cut of [1, 3, 4, 5, 28, 31, 32, 33, stream.length - 1]) {
      const decoder = new FrameDecoder();
      const messages = [...decoder.push(stream.subarray(0, cut)), ...decoder.push(stream.subarray(cut))];
      expect(messages.map((m) => [m.header.serial, m.payload.toString()])).toEqual([
        [7, 'abcd'],
        [8, ''],
      ]);
    }
  });

  it('refuses a length no libvirt message can have', () => {
    expect(() => new FrameDecoder().push(Buffer.from('0000000a', 'hex'))).toThrow(XdrError);
    expect(() => new FrameDecoder().push(Buffer.from('7fffffff', 'hex'))).toThrow(XdrError);
  });
});
