// One libvirt RPC connection: many calls in flight over one byte stream,
// each matched to its reply by serial; keepalive PINGs answered; events and
// stream packets routed to whoever asked for them. A connection is never
// reopened: when it ends (peer closed, protocol error, keepalive timeout)
// every call in flight fails with Unreachable and the owner dials a new one.
import type { Duplex } from 'node:stream';
import { abortError } from '../../cancellation.js';
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { FrameDecoder, MessageStatus, MessageType, encodeMessage, type Message, type MessageHeader } from './framing.js';
import { LibvirtError } from './libvirt-error.js';
import { REMOTE_PROGRAM, REMOTE_PROTOCOL_VERSION, type Procedure } from './procedures.js';
import { remoteError } from './remote-types.js';
import { XdrReader, XdrWriter } from './xdr.js';
import type { XdrType } from './xdr-schema.js';

/** virkeepaliveprotocol.x. */
export const KEEPALIVE_PROGRAM = 0x6b656570;
export const KEEPALIVE_PROTOCOL_VERSION = 1;
export const KeepaliveProcedure = { Ping: 1, Pong: 2 } as const;

/** Receives the packets of one stream (STORAGE_VOL_UPLOAD/DOWNLOAD) after its call was answered. */
export interface StreamReceiver {
  /** A STREAM packet: CONTINUE with data, OK to finish, or ERROR (a decoded LibvirtError). */
  packet(status: number, payload: Buffer, error: LibvirtError | undefined): void;
  /** The connection ended. */
  closed(error: BackendError): void;
}

interface PendingCall {
  readonly procedure: string;
  readonly decode: (payload: Buffer) => void;
  readonly reject: (error: unknown) => void;
}

export type EventListener = (procedure: number, payload: Buffer) => void;

export class RpcConnection {
  private readonly decoder = new FrameDecoder();
  private readonly pending = new Map<number, PendingCall>();
  private readonly streams = new Map<number, StreamReceiver>();
  private readonly closeListeners: ((error: BackendError) => void)[] = [];
  private serial = 0;
  private closedWith: BackendError | undefined;
  /** When the last message arrived (keepalive: any message proves the peer alive). */
  lastReceivedAt = Date.now();

  constructor(
    private readonly stream: Duplex,
    /** Where it leads, for messages: `127.0.0.1:16509`, `unix socket /run/…`. */
    readonly target: string,
    private readonly onEvent: EventListener,
  ) {
    stream.on('data', (chunk: Buffer) => this.receive(chunk));
    stream.on('error', (error: Error) => this.close(asUnreachable(error, target)));
    stream.on('end', () =>
      this.close(new BackendError(BackendErrorKind.Unreachable, `libvirtd at ${target} closed the connection`, { code: 'ConnectionClosed' })),
    );
    stream.on('close', () =>
      this.close(new BackendError(BackendErrorKind.Unreachable, `connection to libvirtd at ${target} closed`, { code: 'ConnectionClosed' })),
    );
    // A TLS socket read in paused mode for libvirt's confirmation byte stays paused until resumed.
    stream.resume();
  }

  get isOpen(): boolean {
    return this.closedWith === undefined;
  }

  /** Calls `procedure`; resolves to its decoded ret. Throws LibvirtError for an error reply, Unreachable when the connection ends first. */
  call<Args, Ret>(procedure: Procedure<Args, Ret>, args: Args, signal?: AbortSignal): Promise<Ret> {
    return this.start(procedure, args, signal);
  }

  /**
   * Calls a stream procedure: `receiver` gets the stream's packets once the
   * call is answered. Resolves to the serial that names the stream.
   */
  async openStream<Args>(procedure: Procedure<Args, void>, args: Args, receiver: StreamReceiver, signal?: AbortSignal): Promise<number> {
    let serial = 0;
    try {
      await this.start(procedure, args, signal, (assigned) => {
        serial = assigned;
        this.streams.set(serial, receiver);
      });
    } catch (error) {
      this.streams.delete(serial);
      throw error;
    }
    return serial;
  }

  private start<Args, Ret>(procedure: Procedure<Args, Ret>, args: Args, signal: AbortSignal | undefined, beforeSend?: (serial: number) => void): Promise<Ret> {
    return new Promise<Ret>((resolve, reject) => {
      if (this.closedWith) return reject(this.closedWith);
      if (signal?.aborted) return reject(abortError(signal));
      const serial = this.nextSerial();
      beforeSend?.(serial);
      const onAbort = (): void => {
        // libvirt has no cancel: the daemon still carries the call out; its reply is dropped.
        this.pending.delete(serial);
        reject(abortError(signal as AbortSignal));
      };
      const done = (): void => signal?.removeEventListener('abort', onAbort);
      this.pending.set(serial, {
        procedure: procedure.name,
        decode: (payload) => {
          done();
          resolve(decodeAll(procedure.ret, payload, procedure.name));
        },
        reject: (error) => {
          done();
          reject(error);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.send(
        { prog: REMOTE_PROGRAM, vers: REMOTE_PROTOCOL_VERSION, proc: procedure.number, type: MessageType.Call, serial, status: MessageStatus.Ok },
        encode(procedure.args, args),
      );
    });
  }

  /** Sends one STREAM packet; resolves once the transport took it (backpressure for uploads). */
  sendStream(procedure: number, serial: number, status: number, payload: Buffer): Promise<void> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const flushed = this.send({ prog: REMOTE_PROGRAM, vers: REMOTE_PROTOCOL_VERSION, proc: procedure, type: MessageType.Stream, serial, status }, payload);
    return flushed ? Promise.resolve() : this.drained();
  }

  /** The stream is over (finished or failed): its packets are no longer routed. */
  endStream(serial: number): void {
    this.streams.delete(serial);
  }

  sendKeepalive(procedure: number): void {
    if (this.closedWith) return;
    this.send(
      { prog: KEEPALIVE_PROGRAM, vers: KEEPALIVE_PROTOCOL_VERSION, proc: procedure, type: MessageType.Message, serial: 0, status: MessageStatus.Ok },
      Buffer.alloc(0),
    );
  }

  /** Told once, when the connection ends. */
  onClose(listener: (error: BackendError) => void): void {
    if (this.closedWith) listener(this.closedWith);
    else this.closeListeners.push(listener);
  }

  /** Ends the connection: calls in flight and open streams fail with `error`. Idempotent. */
  close(
    error: BackendError = new BackendError(BackendErrorKind.Unreachable, `connection to libvirtd at ${this.target} was closed by the client`, {
      code: 'ConnectionClosed',
    }),
  ): void {
    if (this.closedWith) return;
    this.closedWith = error;
    this.stream.destroy();
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
    for (const receiver of this.streams.values()) receiver.closed(error);
    this.streams.clear();
    for (const listener of this.closeListeners.splice(0)) listener(error);
  }

  private nextSerial(): number {
    // Serials are unsigned 32-bit and only need to be unique among calls in flight.
    this.serial = (this.serial + 1) >>> 0;
    return this.serial;
  }

  private send(header: MessageHeader, payload: Buffer): boolean {
    return this.stream.write(encodeMessage(header, payload));
  }

  private drained(): Promise<void> {
    return new Promise((resolve, reject) => {
      const onDrain = (): void => {
        this.stream.off('close', onClose);
        resolve();
      };
      const onClose = (): void => {
        this.stream.off('drain', onDrain);
        reject(this.closedWith);
      };
      this.stream.once('drain', onDrain);
      this.stream.once('close', onClose);
    });
  }

  private receive(chunk: Buffer): void {
    this.lastReceivedAt = Date.now();
    try {
      for (const message of this.decoder.push(chunk)) this.dispatch(message);
    } catch (error) {
      this.close(error instanceof BackendError ? error : this.protocolError(error));
    }
  }

  private protocolError(error: unknown): BackendError {
    return new BackendError(BackendErrorKind.Unreachable, `libvirtd at ${this.target} broke the protocol: ${(error as Error).message}`, {
      cause: error,
      code: 'ProtocolError',
    });
  }

  private dispatch({ header, payload }: Message): void {
    if (header.prog === KEEPALIVE_PROGRAM) {
      if (header.proc === KeepaliveProcedure.Ping) this.sendKeepalive(KeepaliveProcedure.Pong);
      return;
    }
    if (header.prog !== REMOTE_PROGRAM) throw new Error(`unknown program 0x${header.prog.toString(16)}`);
    if (header.type === MessageType.Message) {
      this.onEvent(header.proc, payload);
      return;
    }
    const call = this.pending.get(header.serial);
    if (header.type === MessageType.Reply && call) {
      this.pending.delete(header.serial);
      try {
        if (header.status === MessageStatus.Ok) call.decode(payload);
        else call.reject(decodeError(call.procedure, payload));
      } catch (error) {
        // A reply that does not decode: this call fails, and the connection with it (receive()).
        const failure = this.protocolError(error);
        call.reject(failure);
        throw failure;
      }
      return;
    }
    // After the call's reply, a stream's packets (and its error, sent as a reply) carry the call's serial.
    const receiver = this.streams.get(header.serial);
    if (receiver) {
      const error = header.status === MessageStatus.Error ? decodeError(`stream ${header.proc}`, payload) : undefined;
      receiver.packet(header.status, payload, error);
    }
    // Anything else answers a call that was aborted: dropped.
  }
}

function encode<T>(type: XdrType<T>, value: T): Buffer {
  const writer = new XdrWriter();
  type.encode(writer, value);
  return writer.toBuffer();
}

function decodeAll<T>(type: XdrType<T>, payload: Buffer, procedure: string): T {
  const reader = new XdrReader(payload);
  const value = type.decode(reader);
  if (reader.remaining !== 0) throw new Error(`${procedure}: ${reader.remaining} bytes left after the reply`);
  return value;
}

function decodeError(procedure: string, payload: Buffer): LibvirtError {
  return new LibvirtError(procedure, remoteError.decode(new XdrReader(payload)));
}

function asUnreachable(error: Error, target: string): BackendError {
  if (error instanceof BackendError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new BackendError(BackendErrorKind.Unreachable, `connection to libvirtd at ${target} failed: ${error.message}`, {
    cause: error,
    ...(code === undefined ? {} : { code }),
  });
}
