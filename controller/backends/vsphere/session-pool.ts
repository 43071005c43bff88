// vCenter sessions shared by the passes of one role: one per (endpoint,
// credentials, CA), so a Provider's discovery, image rows and machines cost one
// Login, not one per pass (vCenter caps sessions per user and logs every
// login). A rotated password or CA is a new key: the next pass logs in with it
// and the old session is logged out. Idle sessions are logged out too.
import { createHash } from 'node:crypto';
import { isConnectFailure } from '../backend-error.js';
import { currentSignal, untilAborted, withoutSignal } from '../cancellation.js';
import type { Connection } from '../backend.js';
import type { SoapTransportOptions } from './client/transport.js';
import { VsphereClient } from './client/vsphere-client.js';

interface Entry {
  readonly key: string;
  readonly identity: string;
  readonly client: Promise<VsphereClient>;
  users: number;
  lastUsed: number;
  /** Out of the pool; logged out once its last user is done. */
  dropped: boolean;
}

export interface SessionPoolOptions {
  /** Log out a session unused this long. @default 300000 (5 min; vCenter's own idle timeout is 30 min) */
  readonly idleMs?: number;
  /** Told of every SOAP call (metrics). */
  readonly onCall?: SoapTransportOptions['onCall'];
}

export class VsphereSessionPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  private readonly onCall: SessionPoolOptions['onCall'];
  private sweeper: NodeJS.Timeout | undefined;

  constructor(options: SessionPoolOptions = {}) {
    this.idleMs = options.idleMs ?? 300_000;
    this.onCall = options.onCall;
  }

  /** Runs `use` with the pooled client of `connection`, logging in first when there is none. */
  async use<T>(connection: Connection, use: (client: VsphereClient) => Promise<T>): Promise<T> {
    const entry = this.entryFor(connection);
    entry.users += 1;
    try {
      // The login is shared: a pass whose deadline comes stops waiting for it, the others go on.
      return await use(await untilAborted(entry.client, currentSignal()));
    } catch (err) {
      // Refused credentials or a dead endpoint: the next pass starts from a fresh login.
      if (isConnectFailure(err)) void this.drop(entry);
      throw err;
    } finally {
      entry.users -= 1;
      entry.lastUsed = Date.now();
      if (entry.dropped && entry.users === 0) void logout(entry);
    }
  }

  /** Number of sessions held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Logs every session out (a session still in use: once its last user is done). */
  async closeAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.entries.values()].map((e) => this.drop(e)));
  }

  private entryFor(connection: Connection): Entry {
    const key = keyOf(connection);
    const existing = this.entries.get(key);
    if (existing) return existing;
    // Same endpoint and user with other credentials or CA: a rotation; the old session goes.
    const identity = `${connection.endpoint}\n${connection.credentials.username ?? ''}`;
    for (const other of this.entries.values()) if (other.identity === identity) void this.drop(other);
    // Outside the pass that happens to ask first: its deadline must not fail every other pass's login,
    // and no pass's deadline is the login's (the transport's timeout is).
    const client = withoutSignal(() =>
      VsphereClient.connect({
        endpoint: connection.endpoint,
        username: connection.credentials.username ?? '',
        password: connection.credentials.password ?? '',
        ...(connection.caPem ? { caPem: connection.caPem } : {}),
        insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
        ...(this.onCall ? { onCall: this.onCall } : {}),
      }),
    );
    const entry: Entry = { key, identity, client, users: 0, lastUsed: Date.now(), dropped: false };
    this.entries.set(key, entry);
    client.catch(() => void this.drop(entry));
    this.startSweeper();
    return entry;
  }

  /** Out of the pool; logged out now, or by its last user (see use()). */
  private drop(entry: Entry): Promise<void> {
    if (entry.dropped) return Promise.resolve();
    entry.dropped = true;
    this.entries.delete(entry.key);
    return entry.users === 0 ? logout(entry) : Promise.resolve();
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - this.idleMs;
      for (const entry of this.entries.values()) if (entry.users === 0 && entry.lastUsed < cutoff) void this.drop(entry);
      if (this.entries.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, Math.min(this.idleMs, 60_000));
    this.sweeper.unref();
  }
}

async function logout(entry: Entry): Promise<void> {
  const client = await entry.client.catch(() => undefined);
  await client?.close().catch(() => undefined);
}

/** A hash, so the map holds no password. */
function keyOf(connection: Connection): string {
  const material = JSON.stringify([connection.endpoint, connection.credentials.username, connection.credentials.password, connection.caPem ?? '', connection.insecureSkipTLSVerify]);
  return createHash('sha256').update(material).digest('hex');
}
