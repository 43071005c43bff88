// Message framing of libvirt RPC (virnetprotocol.x): a 4-byte length that
// counts itself, the 24-byte virNetMessageHeader, then the XDR payload.
import { XdrError, XdrReader, XdrWriter } from './xdr.js';
import { xdrInt, xdrStruct, xdrUint, type XdrValue } from './xdr-schema.js';

/** virNetMessageType. */
export const MessageType = {
  Call: 0,
  Reply: 1,
  /** Asynchronous, either way: events, keepalive. */
  Message: 2,
  Stream: 3,
  CallWithFds: 4,
  ReplyWithFds: 5,
  StreamHole: 6,
} as const;

/** virNetMessageStatus. */
export const MessageStatus = {
  Ok: 0,
  /** The payload is a remote_error. */
  Error: 1,
  /** A stream packet with more to come. */
  Continue: 2,
} as const;

export const messageHeader = xdrStruct('virNetMessageHeader', {
  prog: xdrUint,
  vers: xdrUint,
  proc: xdrInt,
  type: xdrInt,
  serial: xdrUint,
  status: xdrInt,
});
export type MessageHeader = XdrValue<typeof messageHeader>;

export interface Message {
  readonly header: MessageHeader;
  readonly payload: Buffer;
}

/** VIR_NET_MESSAGE_LEN_MAX + VIR_NET_MESSAGE_HEADER_MAX. */
const LENGTH_BYTES = 4;
const HEADER_BYTES = 24;
/** VIR_NET_MESSAGE_MAX: the largest message, header included, length word not. */
export const MESSAGE_MAX = 33554432;
/** VIR_NET_MESSAGE_LEGACY_PAYLOAD_MAX: stream packets are cut to this, as libvirt's own client does. */
export const STREAM_CHUNK_MAX = 262120;

/** One message on the wire: length, header, payload. */
export function encodeMessage(header: MessageHeader, payload: Buffer): Buffer {
  const writer = new XdrWriter();
  writer.uint(LENGTH_BYTES + HEADER_BYTES + payload.length);
  messageHeader.encode(writer, header);
  return Buffer.concat([writer.toBuffer(), payload]);
}

/**
 * Splits a byte stream into messages. Chunks go in as the transport delivers
 * them; whole messages come out. A length outside the protocol's bounds
 * throws XdrError: the stream cannot be resynchronised after that.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Message[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const messages: Message[] = [];
    for (;;) {
      if (this.buffered < LENGTH_BYTES) break;
      const head = this.peek(LENGTH_BYTES);
      const length = head.readUInt32BE(0);
      if (length < LENGTH_BYTES + HEADER_BYTES || length - LENGTH_BYTES > MESSAGE_MAX) {
        throw new XdrError(`message length ${length} outside ${LENGTH_BYTES + HEADER_BYTES}..${MESSAGE_MAX + LENGTH_BYTES}`);
      }
      if (this.buffered < length) break;
      const frame = this.take(length);
      const reader = new XdrReader(frame.subarray(LENGTH_BYTES, LENGTH_BYTES + HEADER_BYTES));
      messages.push({ header: messageHeader.decode(reader), payload: frame.subarray(LENGTH_BYTES + HEADER_BYTES) });
    }
    return messages;
  }

  /** The first chunk, joined with the next ones until it holds `size` bytes (the caller checked `buffered`). */
  private peek(size: number): Buffer {
    const first = this.chunks[0];
    if (first !== undefined && first.length >= size) return first;
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined;
  }

  private take(size: number): Buffer {
    const first = this.peek(size);
    if (first.length > size) this.chunks[0] = first.subarray(size);
    else this.chunks.shift();
    this.buffered -= size;
    return first.subarray(0, size);
  }
}
