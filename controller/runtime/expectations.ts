// What this process wrote (or decided to write) into objects' status that the
// informer cache does not show yet — controller-runtime's "expectations". A
// pass that runs before the watch delivers its own write sees what it wrote,
// not the older copy: it neither repeats a create nor forgets a placement a
// sibling must keep clear of. An entry goes once the cache shows its fields,
// the object is another one (uid), or the caller forgets it.
import { containsAll } from './status-writer.js';

interface WithStatus {
  readonly metadata: { readonly uid?: string };
  readonly status?: object;
}

interface Pending<F> {
  readonly uid: string | undefined;
  readonly fields: F;
}

/**
 * - fields: the expected fields are some of the status (others' fields stay as cached);
 * - whole: they are the whole status (a writer that owns it all: what it left out is gone).
 */
export type ExpectedShape = 'fields' | 'whole';

export class Expectations<Fields extends object> {
  private readonly pending = new Map<string, Pending<Fields>>();

  constructor(private readonly shape: ExpectedShape) {}

  /** Remember `fields` as the status `key`'s object (`uid`) will show; nothing when `cached` already shows them. */
  expect(key: string, cached: WithStatus, fields: Fields): void {
    if (this.shows(cached, fields)) this.pending.delete(key);
    else this.pending.set(key, { uid: cached.metadata.uid, fields });
  }

  /** `object` as the cache has it, its status overlaid with what is expected and not shown yet. */
  observe<T extends WithStatus>(key: string, object: T): T {
    const pending = this.pending.get(key);
    if (!pending) return object;
    if (pending.uid !== object.metadata.uid || this.shows(object, pending.fields)) {
      this.pending.delete(key);
      return object;
    }
    return { ...object, status: this.shape === 'whole' ? pending.fields : { ...object.status, ...pending.fields } };
  }

  /** The keys something is expected of; the cache may show some of them by now (observe tells). */
  keys(): IterableIterator<string> {
    return this.pending.keys();
  }

  /** Nothing is expected of `key` any more (the object is gone, or the write did not happen). */
  forget(key: string): void {
    this.pending.delete(key);
  }

  private shows(object: WithStatus, fields: Fields): boolean {
    return containsAll(object.status, fields) && (this.shape === 'fields' || containsAll(fields, object.status));
  }
}
