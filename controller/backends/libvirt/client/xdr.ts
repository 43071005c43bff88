// XDR (RFC 4506) primitives: big-endian 4-byte units, strings and opaques
// padded to 4 bytes. Only what libvirt's remote protocol uses. A decoding
// error means the peer broke the protocol: it throws XdrError, and the
// connection is dropped by its caller.

/** Bytes past the end, a length over its bound, or padding that is not zero. */
export class XdrError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XdrError';
  }
}

const INITIAL_SIZE = 256;

export class XdrWriter {
  private buffer = Buffer.allocUnsafe(INITIAL_SIZE);
  private length = 0;

  int(value: number): void {
    this.ensure(4);
    this.buffer.writeInt32BE(value, this.length);
    this.length += 4;
  }

  uint(value: number): void {
    this.ensure(4);
    this.buffer.writeUInt32BE(value, this.length);
    this.length += 4;
  }

  hyper(value: bigint): void {
    this.ensure(8);
    this.buffer.writeBigInt64BE(value, this.length);
    this.length += 8;
  }

  uhyper(value: bigint): void {
    this.ensure(8);
    this.buffer.writeBigUInt64BE(value, this.length);
    this.length += 8;
  }

  /** Fixed-length opaque: exactly `size` bytes, padded. */
  fixedOpaque(bytes: Uint8Array, size: number): void {
    if (bytes.length !== size) throw new XdrError(`opaque[${size}] given ${bytes.length} bytes`);
    this.raw(bytes);
  }

  /** Variable-length opaque: a length, the bytes, padding. */
  opaque(bytes: Uint8Array, max: number): void {
    if (bytes.length > max) throw new XdrError(`opaque<${max}> given ${bytes.length} bytes`);
    this.uint(bytes.length);
    this.raw(bytes);
  }

  string(value: string, max: number): void {
    this.opaque(Buffer.from(value, 'utf8'), max);
  }

  toBuffer(): Buffer {
    return this.buffer.subarray(0, this.length);
  }

  private raw(bytes: Uint8Array): void {
    const padded = (bytes.length + 3) & ~3;
    this.ensure(padded);
    this.buffer.set(bytes, this.length);
    this.buffer.fill(0, this.length + bytes.length, this.length + padded);
    this.length += padded;
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + extra));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }
}

export class XdrReader {
  private offset = 0;

  constructor(private readonly buffer: Buffer) {}

  int(): number {
    this.need(4);
    const value = this.buffer.readInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  uint(): number {
    this.need(4);
    const value = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  hyper(): bigint {
    this.need(8);
    const value = this.buffer.readBigInt64BE(this.offset);
    this.offset += 8;
    return value;
  }

  uhyper(): bigint {
    this.need(8);
    const value = this.buffer.readBigUInt64BE(this.offset);
    this.offset += 8;
    return value;
  }

  fixedOpaque(size: number): Buffer {
    return this.raw(size);
  }

  opaque(max: number): Buffer {
    const size = this.uint();
    if (size > max) throw new XdrError(`opaque<${max}> announces ${size} bytes`);
    return this.raw(size);
  }

  string(max: number): string {
    return this.opaque(max).toString('utf8');
  }

  /** Bytes not read yet; a fully decoded message has none. */
  get remaining(): number {
    return this.buffer.length - this.offset;
  }

  private raw(size: number): Buffer {
    const padded = (size + 3) & ~3;
    this.need(padded);
    const bytes = this.buffer.subarray(this.offset, this.offset + size);
    for (let i = this.offset + size; i < this.offset + padded; i += 1) {
      if (this.buffer[i] !== 0) throw new XdrError('non-zero XDR padding');
    }
    this.offset += padded;
    // A copy: the message buffer it came from is not kept alive by a small field.
    return Buffer.from(bytes);
  }

  private need(size: number): void {
    if (this.offset + size > this.buffer.length) {
      throw new XdrError(`XDR data ends at ${this.buffer.length} bytes, ${size} more needed at ${this.offset}`);
    }
  }
}
