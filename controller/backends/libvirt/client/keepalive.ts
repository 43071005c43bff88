// Our side of libvirt keepalive (virkeepalive.c): when nothing has arrived
// for an interval, PING; after `count` PINGs without any message back, the
// peer is dead (a hung daemon, a half-open TCP connection) and the
// connection is closed, failing its calls, instead of waiting forever.
import { BackendError, BackendErrorKind } from '../../backend-error.js';
import { KeepaliveProcedure, type RpcConnection } from './rpc-connection.js';

export interface KeepaliveOptions {
  /** Idle time before a PING, and between PINGs. @default 5000 (libvirt's keepalive_interval) */
  readonly intervalMs: number;
  /** PINGs left unanswered before the connection is dropped. @default 5 (libvirt's keepalive_count) */
  readonly count: number;
}

export const DEFAULT_KEEPALIVE: KeepaliveOptions = { intervalMs: 5000, count: 5 };

/** Starts pinging on `connection` until it closes. */
export function startKeepalive(connection: RpcConnection, options: KeepaliveOptions): void {
  let unanswered = 0;
  let lastSeen = connection.lastReceivedAt;
  const timer = setInterval(() => {
    if (connection.lastReceivedAt !== lastSeen) {
      lastSeen = connection.lastReceivedAt;
      unanswered = 0;
    }
    if (Date.now() - lastSeen < options.intervalMs) return;
    if (unanswered >= options.count) {
      const silentMs = Date.now() - lastSeen;
      connection.close(
        new BackendError(BackendErrorKind.Unreachable, `libvirtd at ${connection.target} answered no keepalive for ${silentMs} ms`, {
          code: 'KeepaliveTimeout',
        }),
      );
      return;
    }
    unanswered += 1;
    connection.sendKeepalive(KeepaliveProcedure.Ping);
  }, options.intervalMs);
  // Keepalive never holds the process open.
  timer.unref();
  connection.onClose(() => clearInterval(timer));
}
