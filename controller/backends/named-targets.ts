// What a machine's spec names on its backend: each field that picks a backend
// object by name (a datastore, a bridge, a node…), with the kinds of object a
// Provider may publish it as. Each backend's descriptor lists its own
// (`namedTargets`); the machine reconciler holds them to what the machine's
// Provider publishes before any backend call (published-targets.ts).

/** The kind a machine's image (a template, a template VMID, a boot volume) is published as. */
export const IMAGE_KIND = 'image';

/** One backend object a machine's spec names. */
export interface NamedTarget {
  /** The field as users write it, for messages: spec.datastore, spec.network[0].portGroup. */
  readonly field: string;
  /** The kinds it may be published as (a datastore field names a datastore or a datastore cluster); the first is the one messages name. */
  readonly kinds: readonly [string, ...string[]];
  readonly value: string;
}

/** `value` of `field`, as one target of `kinds`; none when the field is unset. */
export function namedTarget(field: string, kinds: NamedTarget['kinds'], value: string | number | undefined): NamedTarget[] {
  return value === undefined || value === '' ? [] : [{ field, kinds, value: String(value) }];
}
