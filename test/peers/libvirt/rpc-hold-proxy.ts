// A loopback TCP proxy in front of libvirtd's plain TCP listener that holds
// chosen RPC calls for a while before the daemon sees them: libvirt's test
// driver does everything at once, and a fault run needs a machine's creation
// to take seconds, so that a kill lands in the middle of it.
//
// It reads the client's byte stream as libvirt RPC messages (framing.ts,
// virnetprotocol.x) and holds a CALL of the remote program whose procedure
// number (remote_protocol.x) has a hold; every other message passes at once.
// libvirtd answers calls out of order by serial anyway (a connection carries
// many calls in flight), so a held call delays only itself, not the
// keepalive PINGs or the other machines' calls on the same connection. The
// daemon's side passes through untouched (read only to see which calls
// were answered).
//
// A client that goes away (kill -9) does not take its calls with it: the
// daemon still gets the held ones and the connection to it stays until every
// call is answered, as a real daemon carries out a request whose client died.
// Plain TCP only: a proxy cannot read TLS, and `+tcp` is a transport the
// product supports (auth none on the daemon's side, as the test peer runs).
import { connect, createServer, type Server, type Socket } from 'node:net';
import { FrameDecoder, MessageType, encodeMessage, type Message } from '../../../controller/backends/libvirt/client/framing.js';
import { REMOTE_PROGRAM } from '../../../controller/backends/libvirt/client/procedures.js';
import { LOOPBACK } from './libvirtd.js';

export interface RpcHoldProxyProps {
  /** libvirtd's plain TCP port on loopback. */
  readonly upstreamPort: number;
  /** How long each call of a remote procedure is held, by procedure number (remote_protocol.x `REMOTE_PROC_*`). */
  readonly holdMs: Readonly<Record<number, number>>;
}

export interface RpcHoldProxy {
  /** Where clients connect (`<driver>+tcp://127.0.0.1:<port>/…`). */
  readonly port: number;
  /** Calls held so far, by procedure number. */
  readonly held: ReadonlyMap<number, number>;
  /** Connections to the daemon still open (a killed client's stay until its calls are answered). */
  readonly open: number;
  /** Calls still held when their client went away (each reached the daemon all the same). */
  readonly heldPastClient: number;
  /** Stops listening and drops every connection (held calls are not sent). */
  close(): Promise<void>;
}

export async function startRpcHoldProxy(props: RpcHoldProxyProps): Promise<RpcHoldProxy> {
  const held = new Map<number, number>();
  const relays = new Set<Relay>();
  let heldPastClient = 0;
  const server: Server = createServer((inbound) => {
    const relay = new Relay(inbound, connect({ host: LOOPBACK, port: props.upstreamPort }), (proc) => {
      const ms = props.holdMs[proc];
      if (ms !== undefined && ms > 0) held.set(proc, (held.get(proc) ?? 0) + 1);
      return ms ?? 0;
    });
    relays.add(relay);
    relay.onEnd(() => relays.delete(relay));
    relay.onClientLeft((holding) => (heldPastClient += holding));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the RPC proxy has no port');
  return {
    port: address.port,
    held,
    get open() {
      return relays.size;
    },
    get heldPastClient() {
      return heldPastClient;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const relay of relays) relay.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One client connection and its connection to the daemon. */
class Relay {
  private readonly requests = new FrameDecoder();
  private readonly replies = new FrameDecoder();
  /** Serials of calls sent (or held) and not answered yet. */
  private readonly unanswered = new Set<number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private clientGone = false;
  private ended = false;
  private readonly endListeners: (() => void)[] = [];
  private clientLeftListener: ((holding: number) => void) | undefined;

  constructor(
    private readonly inbound: Socket,
    private readonly outbound: Socket,
    /** How long to hold a call of this procedure (0: not at all). */
    private readonly holdFor: (proc: number) => number,
  ) {
    inbound.on('data', (chunk: Buffer) => this.fromClient(chunk));
    // Half-closed or reset: either way the client is gone; its calls still go to the daemon.
    inbound.on('end', () => this.clientLeft());
    inbound.on('close', () => this.clientLeft());
    inbound.on('error', () => this.clientLeft());
    outbound.on('data', (chunk: Buffer) => this.fromDaemon(chunk));
    outbound.on('close', () => this.destroy());
    outbound.on('error', () => this.destroy());
  }

  onEnd(listener: () => void): void {
    this.endListeners.push(listener);
  }

  /** Told once, when the client goes, how many of its calls are still held. */
  onClientLeft(listener: (holding: number) => void): void {
    this.clientLeftListener = listener;
  }

  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.inbound.destroy();
    this.outbound.destroy();
    for (const listener of this.endListeners.splice(0)) listener();
  }

  private fromClient(chunk: Buffer): void {
    let messages: Message[];
    try {
      messages = this.requests.push(chunk);
    } catch {
      // Not libvirt RPC (a length out of bounds): nothing sensible to forward.
      this.destroy();
      return;
    }
    for (const { header, payload } of messages) {
      const frame = encodeMessage(header, payload);
      const isCall = header.prog === REMOTE_PROGRAM && header.type === MessageType.Call;
      if (isCall) this.unanswered.add(header.serial);
      const ms = isCall ? this.holdFor(header.proc) : 0;
      if (ms <= 0) {
        this.outbound.write(frame);
        continue;
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (!this.outbound.destroyed) this.outbound.write(frame);
      }, ms);
      this.timers.add(timer);
    }
  }

  private fromDaemon(chunk: Buffer): void {
    if (!this.clientGone) this.inbound.write(chunk);
    try {
      for (const { header } of this.replies.push(chunk)) if (header.type === MessageType.Reply) this.unanswered.delete(header.serial);
    } catch {
      this.destroy();
      return;
    }
    this.endIfDone();
  }

  private clientLeft(): void {
    if (this.clientGone) return;
    this.clientGone = true;
    this.clientLeftListener?.(this.timers.size);
    this.endIfDone();
  }

  /** Once the client is gone and the daemon answered everything it was sent, the daemon's side closes too. */
  private endIfDone(): void {
    if (!this.clientGone || this.unanswered.size > 0 || this.ended) return;
    this.ended = true;
    this.outbound.end();
    this.inbound.destroy();
    for (const listener of this.endListeners.splice(0)) listener();
  }
}
