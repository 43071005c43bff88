// Streams of STORAGE_VOL_UPLOAD/DOWNLOAD (rpc.rst "Method call with upload
// stream"): the call's reply opens the stream; data then travels as STREAM
// messages of the call's serial with status CONTINUE. Uploading, we finish
// with an empty STREAM OK and the daemon confirms with one; downloading, the
// daemon's empty CONTINUE ends the data, then the same finish. A STREAM
// ERROR carries a remote_error; we abort ours the same way.
import { abortError } from '../../cancellation.js';
import { type BackendError } from '../../backend-error.js';
import { MessageStatus, STREAM_CHUNK_MAX } from './framing.js';
import { ErrorCode, ErrorLevel, type LibvirtError } from './libvirt-error.js';
import type { Procedure } from './procedures.js';
import { remoteError } from './remote-types.js';
import type { RpcConnection, StreamReceiver } from './rpc-connection.js';
import { XdrWriter } from './xdr.js';

/** VIR_FROM_STREAMS (virterror.h): the error domain of an aborted stream. */
const FROM_STREAMS = 38;

/** Collects a stream's packets: data, its end, its failure. */
class Receiver implements StreamReceiver {
  readonly chunks: Buffer[] = [];
  failure: LibvirtError | BackendError | undefined;
  /** The daemon's end of data: an empty CONTINUE packet (what virsh vol-download sees as EOF). */
  eof = false;
  /** The daemon's empty STREAM OK: it confirmed our finish. */
  finished = false;
  private wake: (() => void) | undefined;

  packet(status: number, payload: Buffer, error: LibvirtError | undefined): void {
    if (error) this.failure = error;
    else if (status === MessageStatus.Continue && payload.length === 0) this.eof = true;
    else if (status === MessageStatus.Continue) this.chunks.push(payload);
    else if (status === MessageStatus.Ok) this.finished = true;
    this.wake?.();
  }

  closed(error: BackendError): void {
    this.failure ??= error;
    this.wake?.();
  }

  /** Until `done()` holds or the stream failed (failure throws). */
  async until(done: () => boolean, signal: AbortSignal | undefined): Promise<void> {
    const onAbort = (): void => this.wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      while (!done()) {
        this.throwIfFailed(signal);
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
      this.throwIfFailed(signal);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  throwIfFailed(signal: AbortSignal | undefined): void {
    if (this.failure) throw this.failure;
    if (signal?.aborted) throw abortError(signal);
  }
}

export interface StreamCall<Args> {
  readonly connection: RpcConnection;
  readonly procedure: Procedure<Args, void>;
  readonly args: Args;
  readonly signal: AbortSignal | undefined;
}

/** Sends `data` up the stream; resolves once the daemon confirmed the finish. */
export async function uploadStream<Args>(call: StreamCall<Args>, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<void> {
  const { connection, procedure, signal } = call;
  const receiver = new Receiver();
  const serial = await connection.openStream(procedure, call.args, receiver, signal);
  try {
    for await (const chunk of data instanceof Uint8Array ? [data] : data) {
      for (let offset = 0; offset < chunk.length; offset += STREAM_CHUNK_MAX) {
        receiver.throwIfFailed(signal);
        const piece = Buffer.from(chunk.buffer, chunk.byteOffset + offset, Math.min(STREAM_CHUNK_MAX, chunk.length - offset));
        await connection.sendStream(procedure.number, serial, MessageStatus.Continue, piece);
      }
    }
    receiver.throwIfFailed(signal);
    await connection.sendStream(procedure.number, serial, MessageStatus.Ok, Buffer.alloc(0));
    await receiver.until(() => receiver.finished, signal);
  } catch (error) {
    abort(connection, procedure.number, serial, receiver);
    throw error;
  } finally {
    connection.endStream(serial);
  }
}

/** Reads the whole stream; resolves to its bytes once the daemon confirmed the finish. */
export async function downloadStream<Args>(call: StreamCall<Args>): Promise<Buffer> {
  const { connection, procedure, signal } = call;
  const receiver = new Receiver();
  const serial = await connection.openStream(procedure, call.args, receiver, signal);
  try {
    await receiver.until(() => receiver.eof, signal);
    // After the daemon's end of data, our empty STREAM OK finishes the stream, and it confirms.
    await connection.sendStream(procedure.number, serial, MessageStatus.Ok, Buffer.alloc(0));
    await receiver.until(() => receiver.finished, signal);
    return Buffer.concat(receiver.chunks);
  } catch (error) {
    abort(connection, procedure.number, serial, receiver);
    throw error;
  } finally {
    connection.endStream(serial);
  }
}

/** Tells the daemon we give up on the stream (as virStreamAbort: a STREAM ERROR), unless it ended it itself. */
function abort(connection: RpcConnection, procedure: number, serial: number, receiver: Receiver): void {
  if (receiver.failure !== undefined || !connection.isOpen) return;
  const writer = new XdrWriter();
  remoteError.encode(writer, {
    code: ErrorCode.OPERATION_ABORTED,
    domain: FROM_STREAMS,
    message: 'stream aborted by the client',
    level: ErrorLevel.Error,
    dom: undefined,
    str1: undefined,
    str2: undefined,
    str3: undefined,
    int1: 0,
    int2: 0,
    net: undefined,
  });
  connection.sendStream(procedure, serial, MessageStatus.Error, writer.toBuffer()).catch(() => undefined);
}
