// The one informer: list, then watch from the list's resourceVersion with
// bookmarks; resume from the last seen resourceVersion when a watch ends;
// relist on 410 Gone; restart with backoff after any other error, forever
// (client-node's informer stops for good on non-410 errors, DESIGN §6).
// The cache is keyed by namespace/name, and a changed UID is a delete + add.
import type { ObjectMeta } from '../../infra/api/kind.js';
import type { Logger } from './log.js';
import { Backoff, sleep } from './backoff.js';
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
}

export const keyOf = (obj: KubeObject): string => (obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? ''));

class GoneError extends Error {}

export class Informer<T extends KubeObject> {
  private readonly cache = new Map<string, T>();
  private readonly handlers: Record<InformerEvent, InformerHandler<T>[]> = { add: [], update: [], delete: [] };
  private resourceVersion: string | undefined;
  private synced = false;
  private readonly syncWaiters: (() => void)[] = [];
  private readonly backoff = new Backoff({ initialMs: 500, maxMs: 30_000 });
  /** Times the informer listed from scratch (first list included); tests observe relists. */
  relists = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly options: InformerOptions,
  ) {}

  on(event: InformerEvent, handler: InformerHandler<T>): this {
    this.handlers[event].push(handler);
    return this;
  }

  get(key: string): T | undefined {
    return this.cache.get(key);
  }

  list(namespace?: string): T[] {
    const all = [...this.cache.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the cache, or when run() stops first (shutdown before sync). */
  waitForSync(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.syncWaiters.push(resolve));
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
        const delayMs = this.backoff.next();
        log.warn({ err: err instanceof Error ? err.message : String(err), delayMs }, 'Watch failed, restarting');
        await sleep(delayMs, signal);
      }
    }
    // A shutdown before the first list must not leave the role waiting for a sync forever.
    this.syncWaiters.splice(0).forEach((resolve) => resolve());
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
    if (!this.synced) {
      this.synced = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
  }

  /** Swap the cache for a fresh list, emitting the differences. */
  private replace(items: T[]): void {
    const fresh = new Map(items.map((o) => [keyOf(o), o] as const));
    for (const [key, old] of this.cache) {
      if (!fresh.has(key)) {
        this.cache.delete(key);
        this.emit('delete', old);
      }
    }
    for (const obj of fresh.values()) this.upsert(obj);
  }

  private upsert(obj: T): void {
    const key = keyOf(obj);
    const old = this.cache.get(key);
    this.cache.set(key, obj);
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
      const old = this.cache.get(key);
      this.cache.delete(key);
      this.emit('delete', old ?? event.object);
      return;
    }
    this.upsert(event.object);
  }

  private emit(event: InformerEvent, obj: T, old?: T): void {
    for (const handler of this.handlers[event]) handler(obj, old);
  }
}
