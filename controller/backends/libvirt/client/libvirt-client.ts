// The libvirt client: one connection to one daemon, dialled on demand and
// again after it is lost, and the services built on it. Wire protocol only
// (STYLE §2): no Kubernetes types, no runtime/ imports. Every call honours the
// AbortSignal of the pass it runs for (cancellation.ts `currentSignal()`).
import { currentSignal, untilAborted, withoutSignal } from '../../cancellation.js';
import type { BackendError } from '../../backend-error.js';
import { DomainEvents } from './domain-events.js';
import { Domains } from './domains.js';
import { openConnection } from './handshake.js';
import { Host } from './host.js';
import { DEFAULT_KEEPALIVE, type KeepaliveOptions } from './keepalive.js';
import { isLibvirtError } from './libvirt-error.js';
import { Networks } from './networks.js';
import { Procedures, type Procedure } from './procedures.js';
import type { RpcCaller } from './rpc-caller.js';
import type { RpcConnection } from './rpc-connection.js';
import type { TlsCredentials } from './socket-transports.js';
import type { SshCredentials } from './ssh-transport.js';
import { StoragePools } from './storage-pools.js';
import { StorageVolumes } from './storage-volumes.js';
import { parseLibvirtUri, type LibvirtUri } from './uri.js';

export interface LibvirtClientOptions {
  /** A libvirt URI: `qemu+tls://host/system`, `qemu+ssh://user@host/system`, `test+unix:///default?socket=…`. */
  readonly uri: string;
  /** For `+tls`: client certificate, key and CA. */
  readonly tls?: TlsCredentials;
  /** For `+ssh`: key and host key check. */
  readonly ssh?: SshCredentials;
  /** Deadline to dial and finish the handshake. @default 30000 */
  readonly connectTimeoutMs?: number;
  /** Our PINGs and when to give up on a silent daemon; `false`: none. @default { intervalMs: 5000, count: 5 } */
  readonly keepalive?: KeepaliveOptions | false;
  /** Told of every call once it ends (metrics): the procedure, how it ended, how long it took. */
  readonly onCall?: (procedure: string, outcome: CallOutcome, seconds: number) => void;
}

/** ok; fault: the daemon answered with an error; error: no answer (connection, abort). */
export type CallOutcome = 'ok' | 'fault' | 'error';

export class LibvirtClient implements RpcCaller {
  readonly host: Host;
  readonly domains: Domains;
  readonly pools: StoragePools;
  readonly volumes: StorageVolumes;
  readonly networks: Networks;
  readonly events: DomainEvents;
  private readonly uri: LibvirtUri;
  private current: RpcConnection | undefined;
  private dialling: Promise<RpcConnection> | undefined;
  private openedUri: string | undefined;
  private closed = false;
  private readonly disconnectListeners = new Set<(error: BackendError) => void>();

  constructor(private readonly options: LibvirtClientOptions) {
    this.uri = parseLibvirtUri(options.uri);
    if (this.uri.transport === 'tls' && !options.tls) throw new TypeError(`${options.uri}: TLS credentials (tls.crt, tls.key, ca.crt) are required`);
    if (this.uri.transport === 'ssh' && !options.ssh) throw new TypeError(`${options.uri}: an SSH key is required`);
    this.host = new Host(this);
    this.domains = new Domains(this);
    this.pools = new StoragePools(this);
    this.volumes = new StorageVolumes(this);
    this.networks = new Networks(this);
    this.events = new DomainEvents(this);
  }

  /**
   * Connects and opens the daemon's URI. Throws BackendError: Unreachable for
   * network trouble, a refused server certificate or host key (its `code` is
   * Node's, e.g. `ECONNREFUSED`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, or ours:
   * `HostKeyMismatch`, `KeepaliveTimeout`), Unauthorized for a refused client
   * certificate or SSH key. Bad options throw TypeError.
   */
  static async connect(options: LibvirtClientOptions): Promise<LibvirtClient> {
    const client = new LibvirtClient(options);
    await client.connection();
    return client;
  }

  /** The URI the daemon opened (CONNECT_GET_URI), once connected. */
  get connectedUri(): string | undefined {
    return this.openedUri;
  }

  /** True while a connection is open (it is dialled again on the next call when not). */
  get isConnected(): boolean {
    return this.current?.isOpen ?? false;
  }

  async call<Args, Ret>(procedure: Procedure<Args, Ret>, args: Args): Promise<Ret> {
    const started = process.hrtime.bigint();
    const report = (outcome: CallOutcome): void => this.options.onCall?.(procedure.name, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    try {
      const connection = await this.connection();
      const ret = await connection.call(procedure, args, currentSignal());
      report('ok');
      return ret;
    } catch (error) {
      report(isLibvirtError(error) ? 'fault' : 'error');
      throw error;
    }
  }

  connection(): Promise<RpcConnection> {
    if (this.closed) return Promise.reject(new TypeError('the libvirt client is closed'));
    if (this.current?.isOpen) return Promise.resolve(this.current);
    // Concurrent callers after a loss share one dial, bounded by connectTimeoutMs only: no caller's
    // signal ends it for the others, and each caller waits for it only as long as its own signal
    // allows (a Provider's discovery deadline holds while a machine's pass started the dial).
    this.dialling ??= withoutSignal(() => this.dial()).finally(() => {
      this.dialling = undefined;
    });
    return untilAborted(this.dialling, currentSignal());
  }

  /** Told each time a connection is lost (keepalive timeout, daemon gone); the next call dials again. */
  onDisconnect(listener: (error: BackendError) => void): () => void {
    this.disconnectListeners.add(listener);
    return () => this.disconnectListeners.delete(listener);
  }

  /** Closes the daemon-side connection (CONNECT_CLOSE) and the transport; later calls fail. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events.stop();
    const connection = this.current;
    this.current = undefined;
    if (!connection?.isOpen) return;
    try {
      await connection.call(Procedures.connectClose, undefined);
    } catch {
      // Already gone: nothing left to close on the daemon's side.
    } finally {
      connection.close();
    }
  }

  private async dial(): Promise<RpcConnection> {
    const { connection, uri } = await openConnection(
      {
        uri: this.uri,
        tls: this.options.tls,
        ssh: this.options.ssh,
        connectTimeoutMs: this.options.connectTimeoutMs ?? 30_000,
        keepalive: this.options.keepalive ?? DEFAULT_KEEPALIVE,
        onEvent: (procedure, payload) => this.events.dispatch(procedure, payload),
      },
      currentSignal(),
    );
    if (this.closed) {
      connection.close();
      throw new TypeError('the libvirt client is closed');
    }
    connection.onClose((error) => {
      if (this.closed) return;
      for (const listener of this.disconnectListeners) listener(error);
    });
    // Event callbacks live on the daemon's connection object: a new connection registers them
    // again before anyone uses it, so "connected" means "events flowing" too.
    try {
      await this.events.restore(connection);
    } catch (error) {
      connection.close();
      throw error;
    }
    this.current = connection;
    this.openedUri = uri;
    return connection;
  }
}
