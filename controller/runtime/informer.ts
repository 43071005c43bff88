// The one informer: list, then watch from the list's resourceVersion with
// bookmarks; resume from the last seen resourceVersion when a watch ends;
// relist on 410 Gone; restart with backoff after any other error, forever
// (client-node's informer stops for good on non-410 errors, DESIGN §6).
// A kind the API server stops serving (404: its CRD deleted) has no objects
// left: the API server deleted every one before it removed the CRD. Its cache,
// once synced, is emptied then, with a delete for each object, whether or not
// a watch delivered those deletions: the API server closes a deleted CRD's
// watches a second or so after, dropping the events they had not sent yet, and
// a watch that broke meanwhile cannot resume. A finalizer waiting for those
// objects to go would otherwise wait for ever.
// The cache is keyed by namespace/name, and a changed UID is a delete + add;
// it is indexed by namespace, and by whatever indexes the role adds.
import type { ObjectMeta } from '../../infra/api/kind.js';
import type { Logger } from './log.js';
import { Backoff, sleep } from './backoff.js';
import { CacheIndex, type IndexFunc } from './cache-index.js';
import { toCached } from './cached-object.js';
import { ApiStatusError, type KubeApi, type WatchEvent } from './kube-api.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

export type InformerEvent = 'add' | 'update' | 'delete';
export type InformerHandler<T> = (obj: T, old?: T) => void;

export interface InformerOptions {
  readonly apiVersion: string;
  readonly kind: string;
  /** Watch one namespace; all namespaces when unset. */
  readonly namespace?: string;
  readonly log: Logger;
  /** Server-side watch timeout; the watch is then resumed from the last resourceVersion. */
  readonly watchTimeoutSeconds?: number;
  /** How long `waitForSync()` waits for the first list before rejecting. @default 120 s */
  readonly syncTimeoutMs?: number;
}

export interface WaitForSyncOptions {
  /** Reject after this long; `Infinity` waits for ever. @default the informer's `syncTimeoutMs` */
  readonly timeoutMs?: number;
}

/** Index every informer has: objects by `metadata.namespace` (cluster-scoped ones are in none). */
export const NAMESPACE_INDEX = 'namespace';

const DEFAULT_SYNC_TIMEOUT_MS = 120_000;

export const keyOf = (obj: KubeObject): string => (obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? ''));

class GoneError extends Error {}

/** The API server serves no such kind: 404 on its collection, or no such resource in discovery (kube-api.ts pathOf). */
const isNotServed = (err: unknown): boolean => err instanceof ApiStatusError && err.code === 404;

export class Informer<T extends KubeObject> {
  private readonly cache = new CacheIndex<T>();
  private readonly handlers: Record<InformerEvent, InformerHandler<T>[]> = { add: [], update: [], delete: [] };
  private resourceVersion: string | undefined;
  private synced = false;
  private readonly syncWaiters = new Set<() => void>();
  /** Why the informer is not synced yet, for the waitForSync timeout message. */
  private lastError: string | undefined;
  private readonly backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
  /** Times the informer listed from scratch (first list included); tests observe relists. */
  relists = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly options: InformerOptions,
  ) {
    this.cache.addIndex(NAMESPACE_INDEX, (o) => (o.metadata.namespace ? [o.metadata.namespace] : []));
  }

  on(event: InformerEvent, handler: InformerHandler<T>): this {
    this.handlers[event].push(handler);
    return this;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(namespace?: string): T[] {
    return namespace === undefined ? this.cache.values() : this.cache.byIndex(NAMESPACE_INDEX, namespace);
  }

  /**
   * Index the cache by the values `fn` returns for each object (pure: it is
   * called again on the old object when that changes); objects already cached
   * are indexed at once.
   */
  addIndex(name: string, fn: IndexFunc<T>): this {
    this.cache.addIndex(name, fn);
    return this;
  }

  /** Cached objects that index `name` files under `value`; throws on an unknown index. */
  byIndex(name: string, value: string): T[] {
    return this.cache.byIndex(name, value);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * Resolves once the first list is in the cache, or when run() stops first
   * (shutdown before sync); rejects when neither happens within the timeout,
   * naming the kind and the last list error (RBAC, a missing CRD…).
   */
  waitForSync(options: WaitForSyncOptions = {}): Promise<void> {
    if (this.synced) return Promise.resolve();
    const timeoutMs = options.timeoutMs ?? this.options.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.syncWaiters.delete(done);
            reject(new Error(this.syncTimeoutMessage(timeoutMs)));
          }, timeoutMs)
        : undefined;
      timer?.unref();
      this.syncWaiters.add(done);
    });
  }

  private syncTimeoutMessage(timeoutMs: number): string {
    const { kind, apiVersion, namespace } = this.options;
    const scope = namespace ? ` in namespace ${namespace}` : '';
    return `cache of ${kind} (${apiVersion})${scope} did not sync within ${timeoutMs / 1000}s: ${this.lastError ?? 'the list has not answered'}`;
  }

  private markSynced(): void {
    this.synced = true;
    this.lastError = undefined;
    for (const resolve of [...this.syncWaiters]) resolve();
    this.syncWaiters.clear();
  }

  /** Run until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    const log = this.options.log.child({ informer: this.options.kind });
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.relist(signal);
        await this.watch(signal);
        this.backoff.reset();
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError || (err instanceof ApiStatusError && err.code === 410)) {
          log.info({ resourceVersion: this.resourceVersion }, 'Watch expired, relisting');
          this.resourceVersion = undefined;
          continue;
        }
        if (isNotServed(err)) {
          // The watch says the kind is not served: the list says whether it still has objects.
          if (this.resourceVersion !== undefined) {
            this.resourceVersion = undefined;
            continue;
          }
          if (this.synced) this.forgetAll(log);
        }
        const delayMs = this.backoff.next();
        if (!this.synced) this.lastError = err instanceof Error ? err.message : String(err);
        log.warn({ err: err instanceof Error ? err.message : String(err), delayMs }, 'Watch failed, restarting');
        await sleep(delayMs, signal);
      }
    }
    // A shutdown before the first list must not leave the role waiting for a sync forever.
    for (const resolve of [...this.syncWaiters]) resolve();
    this.syncWaiters.clear();
  }

  private async collectionPath(): Promise<string> {
    return this.api.pathOf({
      apiVersion: this.options.apiVersion,
      kind: this.options.kind,
      metadata: { name: '', ...(this.options.namespace ? { namespace: this.options.namespace } : {}) },
    });
  }

  private async relist(signal: AbortSignal): Promise<void> {
    const path = await this.collectionPath();
    const items: T[] = [];
    let continueToken: string | undefined;
    let listVersion = '';
    do {
      if (signal.aborted) return;
      const page = await this.api.request<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>('GET', path, {
        query: { limit: '500', continue: continueToken },
      });
      items.push(...page.items);
      continueToken = page.metadata.continue || undefined;
      listVersion = page.metadata.resourceVersion;
    } while (continueToken);
    this.replace(items);
    this.resourceVersion = listVersion;
    this.relists += 1;
    if (!this.synced) this.markSynced();
  }

  /**
   * The API server lists no such kind any more (404): none of its objects is left, so none stays
   * in the cache. Not before the first list: a kind missing at start is for waitForSync to report.
   */
  private forgetAll(log: Logger): void {
    const cached = this.cache.size;
    if (cached === 0) return;
    log.warn({ objects: cached }, 'The API server no longer serves this kind (its CRD is deleted): its cached objects are gone');
    try {
      this.replace([]);
    } catch (err) {
      // A handler that threw leaves the objects after it cached: the next list that answers 404 goes on.
      log.error({ err: err instanceof Error ? err.message : String(err) }, 'Emptying the cache failed');
    }
  }

  /** Swap the cache for a fresh list, emitting the differences. */
  private replace(items: T[]): void {
    const fresh = new Map(items.map((o) => [keyOf(o), o] as const));
    for (const [key, old] of [...this.cache.entries()]) {
      if (!fresh.has(key)) {
        this.cache.delete(key);
        this.emit('delete', old);
      }
    }
    for (const obj of fresh.values()) this.upsert(obj);
  }

  private upsert(obj: T): void {
    const old = this.cache.set(keyOf(obj), toCached(obj));
    if (!old) this.emit('add', obj);
    else if (old.metadata.uid !== obj.metadata.uid) {
      // Deleted and recreated under the same name while we were not watching.
      this.emit('delete', old);
      this.emit('add', obj);
    } else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const path = await this.collectionPath();
    await this.api.watch<T>(
      path,
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(this.options.watchTimeoutSeconds ?? 300),
      },
      (event) => this.apply(event),
      signal,
    );
  }

  private apply(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') {
      const status = event.object as unknown as { code?: number; message?: string };
      if (status.code === 410) throw new GoneError(status.message ?? 'gone');
      throw new Error(`watch error ${status.code ?? ''}: ${status.message ?? ''}`);
    }
    this.resourceVersion = event.object.metadata.resourceVersion ?? this.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    if (event.type === 'DELETED') {
      const key = keyOf(event.object);
      const old = this.cache.delete(key);
      this.emit('delete', old ?? event.object);
      return;
    }
    this.upsert(event.object);
  }

  private emit(event: InformerEvent, obj: T, old?: T): void {
    for (const handler of this.handlers[event]) handler(obj, old);
  }
}
