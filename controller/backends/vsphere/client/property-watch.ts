// Changes of properties as vCenter sends them: a PropertyCollector of the watch's own
// (CreatePropertyCollector, so its filters and version are nobody else's), read by
// WaitForUpdatesEx long polls. A filter's objects come first as they are (`enter`), then what
// changed since the version before. Destroying the collector destroys its filters; a session
// that ends (logout, expiry) ends both on the server.
import type { PropertyFilterSpec } from './property-collector.js';
import { filterSpecFields } from './property-collector.js';
import type { VimInvoker } from './session.js';
import type { ManagedObjectReference } from './vim-types.js';
import type { XmlElement } from './xml-element.js';
import { isVsphereFault } from './vsphere-fault.js';
import { toMoRef } from './wire-values.js';

/** One object's change: it entered the filter's set, changed, or left it. */
export interface ObjectUpdate {
  readonly kind: 'enter' | 'modify' | 'leave';
  readonly obj: ManagedObjectReference;
  /** Changed paths with their new value; undefined for a value removed. */
  readonly changes: ReadonlyMap<string, XmlElement | undefined>;
}

export interface WaitOptions {
  /** Answer with no update after this long. @default 60 */
  readonly maxWaitSeconds?: number;
}

export class PropertyWatch {
  private version = '';

  private constructor(
    private readonly vim: VimInvoker,
    private readonly collector: ManagedObjectReference,
  ) {}

  /** A collector of its own, without filters yet. */
  static async create(vim: VimInvoker): Promise<PropertyWatch> {
    const created = (await vim.invoke('CreatePropertyCollector', vim.serviceContent.propertyCollector)).child('returnval');
    if (created === undefined) throw new Error('CreatePropertyCollector: no collector in the response');
    return new PropertyWatch(vim, toMoRef(created));
  }

  /** Adds a filter (whole values, not partial updates): its objects come as `enter` at the next call of next(). */
  async addFilter(spec: PropertyFilterSpec): Promise<ManagedObjectReference> {
    const created = (await this.vim.invoke('CreateFilter', this.collector, { spec: filterSpecFields(spec), partialUpdates: false })).child('returnval');
    if (created === undefined) throw new Error('CreateFilter: no filter in the response');
    return toMoRef(created);
  }

  /** Destroys a filter of this watch: its objects change nothing any more. */
  async removeFilter(filter: ManagedObjectReference): Promise<void> {
    await this.vim.invoke('DestroyPropertyFilter', filter);
  }

  /** The updates since the last call (every object at the first); none when `maxWaitSeconds` passed without one, or cancel() ended the wait. */
  async next(options: WaitOptions = {}): Promise<ObjectUpdate[]> {
    const updates: ObjectUpdate[] = [];
    for (;;) {
      const response = await this.wait(options.maxWaitSeconds ?? 60);
      if (response === undefined) return updates;
      const set = response.child('returnval');
      if (set === undefined) return updates;
      this.version = set.childText('version') ?? this.version;
      for (const filter of set.childrenNamed('filterSet')) updates.push(...filter.childrenNamed('objectSet').map(toObjectUpdate));
      // A set cut short (too many objects at once) is continued from its version at once.
      if (set.childText('truncated') !== 'true') return updates;
    }
  }

  /** WaitForUpdatesEx; undefined when cancel() ended it. */
  private async wait(maxWaitSeconds: number): Promise<XmlElement | undefined> {
    try {
      return await this.vim.invoke('WaitForUpdatesEx', this.collector, {
        version: this.version === '' ? undefined : this.version,
        options: { maxWaitSeconds },
      });
    } catch (err) {
      if (isVsphereFault(err, 'RequestCanceled')) return undefined;
      throw err;
    }
  }

  /** Ends the wait of next() now, with no update; a call that finds no wait running does nothing. */
  async cancel(): Promise<void> {
    await this.vim.invoke('CancelWaitForUpdates', this.collector);
  }

  /** Destroys the collector and its filters; a session already gone has none to destroy. */
  async close(): Promise<void> {
    try {
      await this.vim.invoke('DestroyPropertyCollector', this.collector);
    } catch {
      // Gone with its session, or the server is unreachable: it frees the collector at logout or expiry.
    }
  }
}

function toObjectUpdate(element: XmlElement): ObjectUpdate {
  const obj = element.child('obj');
  if (obj === undefined) throw new Error('ObjectUpdate without obj');
  const kind = element.childText('kind');
  const changes = new Map<string, XmlElement | undefined>();
  for (const change of element.childrenNamed('changeSet')) {
    const name = change.childText('name');
    if (name === undefined) continue;
    changes.set(name, change.childText('op') === 'remove' ? undefined : change.child('val'));
  }
  return { kind: kind === 'enter' || kind === 'leave' ? kind : 'modify', obj: toMoRef(obj), changes };
}
