// The libvirt connections of one role (kit/session-pool.ts): one client per (URI,
// credentials, CA), so a Provider's discovery, image rows and machines share one connection
// and one event callback. The client dials on demand and again after a loss, so a client
// outlives network trouble and is not dropped for it; a rotated Secret or CA gets a new one
// (the old one is closed), as does an idle one.
import { SessionPool } from '../kit/session-pool.js';
import { LibvirtClient, type LibvirtClientOptions } from './client/libvirt-client.js';
import { toClientOptions } from './credentials.js';

export interface LibvirtSessionsOptions {
  /** Close a client unused this long. @default 300000 (5 min) */
  readonly idleMs?: number;
  /** Told of every libvirt call (metrics). */
  readonly onCall?: LibvirtClientOptions['onCall'];
}

/** A Secret lacking its transport's keys throws BackendError Unauthorized at its first use; a bad URI TypeError. */
export function libvirtSessions(options: LibvirtSessionsOptions = {}): SessionPool<LibvirtClient> {
  return new SessionPool<LibvirtClient>({
    open: (connection) => new LibvirtClient(toClientOptions(connection, options.onCall)),
    close: (client) => client.close(),
    ...(options.idleMs === undefined ? {} : { idleMs: options.idleMs }),
  });
}
