// libvirt connections shared by the passes of one provider role: one client
// per (URI, credentials, CA), so a Provider's discovery, image rows and
// machines share one connection and one event callback. The client dials on
// demand and again after a loss, so an entry outlives network trouble; a
// rotated Secret or CA is a new key (the old client is closed), and an idle
// client is closed too.
import { createHash } from 'node:crypto';
import type { Connection } from '../backend.js';
import { LibvirtClient, type LibvirtClientOptions } from './client/libvirt-client.js';
import { toClientOptions } from './credentials.js';

interface Entry {
  readonly key: string;
  readonly endpoint: string;
  readonly client: LibvirtClient;
  users: number;
  lastUsed: number;
  /** Out of the pool; closed once its last user is done. */
  dropped: boolean;
}

export interface LibvirtSessionPoolOptions {
  /** Close a client unused this long. @default 300000 (5 min) */
  readonly idleMs?: number;
  /** Told of every libvirt call (metrics). */
  readonly onCall?: LibvirtClientOptions['onCall'];
}

export class LibvirtSessionPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: LibvirtSessionPoolOptions = {}) {
    this.idleMs = options.idleMs ?? 300_000;
  }

  /**
   * Runs `use` with the pooled client of `connection` (it dials on its first call). A Secret
   * lacking its transport's keys throws BackendError Unauthorized; a bad URI TypeError.
   */
  async use<T>(connection: Connection, use: (client: LibvirtClient) => Promise<T>): Promise<T> {
    const entry = this.entryFor(connection);
    entry.users += 1;
    try {
      return await use(entry.client);
    } finally {
      entry.users -= 1;
      entry.lastUsed = Date.now();
      if (entry.dropped && entry.users === 0) close(entry);
    }
  }

  /** Number of clients held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    const entries = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(entries.map((entry) => entry.client.close().catch(() => undefined)));
  }

  private entryFor(connection: Connection): Entry {
    const key = keyOf(connection);
    const existing = this.entries.get(key);
    if (existing) return existing;
    // Checked first: a Secret lacking its transport's keys throws, and the client in use stays.
    const options = toClientOptions(connection, this.options.onCall);
    // Same endpoint with other credentials or CA: a rotation; the old client goes once idle.
    for (const other of this.entries.values()) if (other.endpoint === connection.endpoint) this.drop(other);
    const client = new LibvirtClient(options);
    const entry: Entry = { key, endpoint: connection.endpoint, client, users: 0, lastUsed: Date.now(), dropped: false };
    this.entries.set(key, entry);
    this.startSweeper();
    return entry;
  }

  /** Out of the pool; closed now, or by its last user (see use()). */
  private drop(entry: Entry): void {
    entry.dropped = true;
    this.entries.delete(entry.key);
    if (entry.users === 0) close(entry);
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - this.idleMs;
      for (const entry of this.entries.values()) if (entry.users === 0 && entry.lastUsed < cutoff) this.drop(entry);
      if (this.entries.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, Math.min(this.idleMs, 60_000));
    this.sweeper.unref();
  }
}

function close(entry: Entry): void {
  void entry.client.close().catch(() => undefined);
}

/** A hash, so the map holds no key material. */
function keyOf(connection: Connection): string {
  const credentials = Object.entries(connection.credentials).sort(([a], [b]) => a.localeCompare(b));
  const material = JSON.stringify([connection.endpoint, credentials, connection.caPem ?? '', connection.insecureSkipTLSVerify]);
  return createHash('sha256').update(material).digest('hex');
}
