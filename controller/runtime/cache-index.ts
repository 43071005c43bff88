// The informer's store: objects by key, plus named secondary indexes (as
// client-go's Indexer), so "the VMs of this namespace / class / image" is a
// lookup, not a scan of the whole cache. Index functions must be pure: an
// object's old entries are found again by calling the function on the old
// object when it is replaced or deleted.

/** The values an object is filed under in one index (none: not in it). */
export type IndexFunc<T> = (obj: T) => string[];

export class CacheIndex<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → value → keys of the objects filed under it. */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  values(): T[] {
    return [...this.items.values()];
  }

  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  /** Store `obj` under `key`, replacing (and refiling) what was there; returns the old object. */
  set(key: string, obj: T): T | undefined {
    const old = this.items.get(key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) {
      const before = old === undefined ? new Set<string>() : new Set(fn(old));
      const after = new Set(fn(obj));
      // Values kept are left alone, so an update keeps the object's place in byIndex order.
      this.unfile(
        name,
        key,
        [...before].filter((v) => !after.has(v)),
      );
      this.file(
        name,
        key,
        [...after].filter((v) => !before.has(v)),
      );
    }
    return old;
  }

  /** Remove `key`; returns the object it held. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    for (const [name, fn] of this.indexers) this.unfile(name, key, fn(old));
    this.items.delete(key);
    return old;
  }

  /** Add an index; objects already stored are filed at once. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`index "${name}" already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.items) this.file(name, key, fn(obj));
  }

  /** Objects filed under `value` in index `name`, in the order they were first filed there. */
  byIndex(name: string, value: string): T[] {
    const keys = this.indexOf(name).get(value);
    return keys ? [...keys].map((k) => this.items.get(k) as T) : [];
  }

  private indexOf(name: string): Map<string, Set<string>> {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index "${name}" (known: ${[...this.indexers.keys()].join(', ') || 'none'})`);
    return index;
  }

  private file(name: string, key: string, values: Iterable<string>): void {
    const index = this.indexOf(name);
    for (const value of values) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unfile(name: string, key: string, values: Iterable<string>): void {
    const index = this.indexOf(name);
    for (const value of values) {
      const keys = index.get(value);
      keys?.delete(key);
      // Empty buckets go, or an index over short-lived values grows for ever.
      if (keys?.size === 0) index.delete(value);
    }
  }
}
