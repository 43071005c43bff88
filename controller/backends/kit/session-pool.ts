// Backend clients shared by the passes of one provider role: one per connection (endpoint,
// credentials, CA), so a Provider's discovery, image rows and machines share one login and
// its kept-alive connections instead of one per pass (vCenter caps sessions per user and logs
// every login). A rotated Secret or CA is a new key: the next pass opens a client with it and,
// once that client is open (its login accepted), the old one (same endpoint and identity) is
// closed once its last user is done, as is a client unused for `idleMs`. A connection whose
// opening fails closes nothing: a tenant's Provider naming an admin's endpoint and user with a
// wrong password never logs the admin's session out. The pool keeps hashes, never credentials
// or identities in the clear.
import { createHash } from 'node:crypto';
import type { Connection } from '../backend.js';
import { currentSignal, untilAborted, withoutSignal } from '../cancellation.js';

export interface SessionPoolOptions<Client> {
  /**
   * Opens the client of a connection (a login may be under way when it resolves to it later).
   * Throws, before the pool changes, for a connection it cannot use (a Secret lacking its keys).
   */
  readonly open: (connection: Connection) => Promise<Client> | Client;
  /** Logs the client out and closes its connections; failures are ignored. */
  readonly close: (client: Client) => Promise<void> | void;
  /**
   * Who the connection is on its endpoint (endpoint and user): another key with the same identity, once
   * its client opened, is a rotation. @default the endpoint
   */
  readonly identity?: (connection: Connection) => string;
  /** A pass that failed so drops the client: the next one opens a fresh one (refused credentials, a dead endpoint). @default never */
  readonly dropOn?: (error: unknown) => boolean;
  /** Close a client unused this long. @default 300000 (5 min; vCenter's own idle timeout is 30 min) */
  readonly idleMs?: number;
}

interface Entry<Client> {
  readonly key: string;
  readonly identity: string;
  readonly client: Promise<Client>;
  users: number;
  lastUsed: number;
  /** Out of the pool; closed once its last user is done. */
  dropped: boolean;
}

export class SessionPool<Client> {
  private readonly entries = new Map<string, Entry<Client>>();
  private readonly idleMs: number;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: SessionPoolOptions<Client>) {
    this.idleMs = options.idleMs ?? 300_000;
  }

  /** Runs `work` with the pooled client of `connection`, opening one first when there is none. */
  readonly use = async <T>(connection: Connection, work: (client: Client) => Promise<T>): Promise<T> => {
    const entry = this.entryFor(connection);
    entry.users += 1;
    try {
      // An opening is shared: a pass whose deadline comes stops waiting for it, the others go on.
      return await work(await untilAborted(entry.client, currentSignal()));
    } catch (err) {
      if (this.options.dropOn?.(err)) void this.drop(entry);
      throw err;
    } finally {
      entry.users -= 1;
      entry.lastUsed = Date.now();
      if (entry.dropped && entry.users === 0) void this.closeEntry(entry);
    }
  };

  /** Number of clients held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every client (one in use: once its last user is done). */
  async closeAll(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    await Promise.all([...this.entries.values()].map((entry) => this.drop(entry)));
  }

  private entryFor(connection: Connection): Entry<Client> {
    const key = keyOf(connection);
    const existing = this.entries.get(key);
    if (existing) return existing;
    // Outside the pass that happens to ask first: its deadline must not fail every other pass's
    // login, and no pass's deadline is the login's (the transport's timeout is).
    const client = withoutSignal(() => {
      const opened = this.options.open(connection);
      return opened instanceof Promise ? opened : Promise.resolve(opened);
    });
    const identity = hashOf(this.options.identity?.(connection) ?? connection.endpoint);
    const entry: Entry<Client> = { key, identity, client, users: 0, lastUsed: Date.now(), dropped: false };
    this.entries.set(key, entry);
    client.then(
      () => this.rotatedTo(entry),
      () => void this.drop(entry),
    );
    this.startSweeper();
    return entry;
  }

  /**
   * `entry`'s client opened: the other clients of its identity are the rotated-away ones. Only now,
   * so that credentials that cannot log in (a wrong password, a tenant's guess) close nobody's.
   */
  private rotatedTo(entry: Entry<Client>): void {
    if (entry.dropped) return;
    for (const other of [...this.entries.values()]) if (other !== entry && other.identity === entry.identity) void this.drop(other);
  }

  /** Out of the pool; closed now, or by its last user (see use). */
  private drop(entry: Entry<Client>): Promise<void> {
    if (entry.dropped) return Promise.resolve();
    entry.dropped = true;
    this.entries.delete(entry.key);
    return entry.users === 0 ? this.closeEntry(entry) : Promise.resolve();
  }

  private async closeEntry(entry: Entry<Client>): Promise<void> {
    const client = await entry.client.catch(() => undefined);
    if (client === undefined) return;
    try {
      await this.options.close(client);
    } catch {
      // A client that cannot close cleanly is gone all the same.
    }
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(
      () => {
        const cutoff = Date.now() - this.idleMs;
        for (const entry of [...this.entries.values()]) if (entry.users === 0 && entry.lastUsed < cutoff) void this.drop(entry);
        if (this.entries.size === 0 && this.sweeper) {
          clearInterval(this.sweeper);
          this.sweeper = undefined;
        }
      },
      Math.min(this.idleMs, 60_000),
    );
    this.sweeper.unref();
  }
}

/** A hash, so the map holds no secret. */
function keyOf(connection: Connection): string {
  const credentials = Object.entries(connection.credentials).sort(([a], [b]) => a.localeCompare(b));
  return hashOf(JSON.stringify([connection.endpoint, credentials, connection.caPem ?? '', connection.insecureSkipTLSVerify]));
}

function hashOf(material: string): string {
  return createHash('sha256').update(material).digest('hex');
}
