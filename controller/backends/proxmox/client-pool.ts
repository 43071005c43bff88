// Proxmox clients shared by the passes of one provider role: one per
// (endpoint, token, CA), so a Provider's discovery, image rows and machines
// reuse kept-alive TLS connections instead of a handshake per pass. A token
// has no session to log in or out of; what the pool owns is the connections.
// A rotated secret or CA is a new key: the next pass connects with it and the
// old client is closed once its last user is done. Idle clients are closed too.
import { createHash } from 'node:crypto';
import { BackendError, BackendErrorKind, isConnectFailure } from '../backend-error.js';
import type { Connection } from '../backend.js';
import { ProxmoxCredentialKeys } from './client/credentials.js';
import { ProxmoxClient } from './client/proxmox-client.js';
import type { ProxmoxTransportOptions } from './client/transport.js';

interface Entry {
  readonly key: string;
  readonly identity: string;
  readonly client: ProxmoxClient;
  users: number;
  lastUsed: number;
  /** Out of the pool; closed once its last user is done. */
  dropped: boolean;
}

export interface ProxmoxClientPoolOptions {
  /** Close a client unused this long. @default 300000 (5 min) */
  readonly idleMs?: number;
  /** Told of every API call (metrics). */
  readonly onCall?: ProxmoxTransportOptions['onCall'];
}

export class ProxmoxClientPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  private readonly onCall: ProxmoxClientPoolOptions['onCall'];
  private sweeper: NodeJS.Timeout | undefined;

  constructor(options: ProxmoxClientPoolOptions = {}) {
    this.idleMs = options.idleMs ?? 300_000;
    this.onCall = options.onCall;
  }

  /**
   * Runs `use` with the pooled client of `connection`. A Secret without the
   * token keys is BackendError Unauthorized (code CredentialsUnavailable).
   */
  async use<T>(connection: Connection, use: (client: ProxmoxClient) => Promise<T>): Promise<T> {
    const entry = this.entryFor(connection);
    entry.users += 1;
    try {
      return await use(entry.client);
    } catch (err) {
      // A refused token or a dead endpoint: the next pass starts from fresh connections.
      if (isConnectFailure(err)) this.drop(entry);
      throw err;
    } finally {
      entry.users -= 1;
      entry.lastUsed = Date.now();
      if (entry.dropped && entry.users === 0) entry.client.close();
    }
  }

  /** Number of clients held (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Closes every client (one in use: once its last user is done). */
  closeAll(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const entry of [...this.entries.values()]) this.drop(entry);
  }

  private entryFor(connection: Connection): Entry {
    const tokenID = connection.credentials[ProxmoxCredentialKeys.tokenID];
    const tokenSecret = connection.credentials[ProxmoxCredentialKeys.tokenSecret];
    if (!tokenID || !tokenSecret) {
      throw new BackendError(BackendErrorKind.Unauthorized, `credentials Secret needs ${ProxmoxCredentialKeys.tokenID} and ${ProxmoxCredentialKeys.tokenSecret}`, {
        code: 'CredentialsUnavailable',
      });
    }
    const key = keyOf(connection, tokenID, tokenSecret);
    const existing = this.entries.get(key);
    if (existing) return existing;
    // Same endpoint and token with another secret or CA: a rotation; the old client goes.
    const identity = `${connection.endpoint}\n${tokenID}`;
    for (const other of [...this.entries.values()]) if (other.identity === identity) this.drop(other);
    const client = ProxmoxClient.create({
      endpoint: connection.endpoint,
      tokenID,
      tokenSecret,
      ...(connection.caPem ? { caPem: connection.caPem } : {}),
      insecureSkipTLSVerify: connection.insecureSkipTLSVerify,
      ...(this.onCall ? { onCall: this.onCall } : {}),
    });
    const entry: Entry = { key, identity, client, users: 0, lastUsed: Date.now(), dropped: false };
    this.entries.set(key, entry);
    this.startSweeper();
    return entry;
  }

  private drop(entry: Entry): void {
    if (entry.dropped) return;
    entry.dropped = true;
    this.entries.delete(entry.key);
    if (entry.users === 0) entry.client.close();
  }

  private startSweeper(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      const cutoff = Date.now() - this.idleMs;
      for (const entry of [...this.entries.values()]) if (entry.users === 0 && entry.lastUsed < cutoff) this.drop(entry);
      if (this.entries.size === 0 && this.sweeper) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
      }
    }, Math.min(this.idleMs, 60_000));
    this.sweeper.unref();
  }
}

/** A hash, so the map holds no secret. */
function keyOf(connection: Connection, tokenID: string, tokenSecret: string): string {
  const material = JSON.stringify([connection.endpoint, tokenID, tokenSecret, connection.caPem ?? '', connection.insecureSkipTLSVerify]);
  return createHash('sha256').update(material).digest('hex');
}
