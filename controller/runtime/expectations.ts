// What this process wrote into objects that the informer cache does not show
// yet — controller-runtime's "expectations". A pass that runs before the watch
// delivers its own write sees what it wrote, not the older copy: it neither
// repeats a create or a patch nor forgets a placement a sibling must keep clear
// of. An entry goes once the cache shows it, the object is another one (uid),
// it is older than its bound, or the caller forgets it.
import { containsAll } from './status-writer.js';

interface Identified {
  readonly metadata: { readonly uid?: string };
}

/** Where in an object a write lands: whether a copy shows it, and a copy as the write leaves it. */
export interface WrittenPart<T, F> {
  shows(object: T, fields: F): boolean;
  overlay<U extends T>(object: U, fields: F): U;
}

type Section = 'spec' | 'status';
type WithSection<S extends Section> = Identified & { readonly [K in S]?: object };

/** Some fields of the spec or status: others' fields stay as cached. */
export function someFieldsOf<S extends Section, F extends object>(section: S): WrittenPart<WithSection<S>, F> {
  return {
    shows: (object, fields) => containsAll(object[section], fields),
    overlay: (object, fields) => ({ ...object, [section]: { ...object[section], ...fields } }),
  };
}

/** The whole status, by a writer that owns it all: what it left out is gone. */
export function wholeStatus<F extends object>(): WrittenPart<WithSection<'status'>, F> {
  return {
    shows: (object, fields) => containsAll(object.status, fields) && containsAll(fields, object.status),
    overlay: (object, fields) => ({ ...object, status: fields }),
  };
}

interface Pending<F> {
  readonly uid: string | undefined;
  readonly fields: F;
  readonly at: number;
}

export interface ExpectationsOptions {
  /** How long an entry may wait for the cache to show it (a write whose event never shows it: someone undid it). */
  readonly maxAgeMs?: number;
  /** Milliseconds, monotonic. */
  readonly now?: () => number;
}

export class Expectations<T extends Identified, F extends object> {
  private readonly pending = new Map<string, Pending<F>>();
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(
    private readonly part: WrittenPart<T, F>,
    { maxAgeMs = Infinity, now = () => performance.now() }: ExpectationsOptions = {},
  ) {
    this.maxAgeMs = maxAgeMs;
    this.now = now;
  }

  /** Remember `fields` as written into `key`'s object (`cached`'s uid); nothing when `cached` already shows them. */
  expect(key: string, cached: T, fields: F): void {
    if (this.part.shows(cached, fields)) this.pending.delete(key);
    else this.pending.set(key, { uid: cached.metadata.uid, fields, at: this.now() });
  }

  /** `object` as the cache has it, overlaid with what is expected and not shown yet. */
  observe<U extends T>(key: string, object: U): U {
    const fields = this.awaited(key, object);
    return fields === undefined ? object : this.part.overlay(object, fields);
  }

  /** Whether this process wrote something into `object` that the cache does not show yet (its watch event is to come). */
  awaits(key: string, object: T): boolean {
    return this.awaited(key, object) !== undefined;
  }

  /** The keys something is expected of; the cache may show some of them by now (observe tells). */
  keys(): IterableIterator<string> {
    return this.pending.keys();
  }

  /** Nothing is expected of `key` any more (the object is gone, or the write did not happen). */
  forget(key: string): void {
    this.pending.delete(key);
  }

  private awaited(key: string, object: T): F | undefined {
    const pending = this.pending.get(key);
    if (!pending) return undefined;
    if (pending.uid !== object.metadata.uid || this.now() - pending.at >= this.maxAgeMs || this.part.shows(object, pending.fields)) {
      this.pending.delete(key);
      return undefined;
    }
    return pending.fields;
  }
}
