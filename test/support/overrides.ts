// Test factories take overrides of their defaults, so a test states only what
// it is about. An optional key is either set or absent (exactOptionalPropertyTypes):
// a test that wants a default gone gives that key as `undefined`, and the object
// made leaves the key out rather than holding an undefined value.

/** The keys of `T` that may be absent. */
type OptionalKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? K : never }[keyof T];

/** Changes to a `T`: any key replaced; an optional one removed by `undefined`. */
export type Overrides<T> = { [K in keyof T]?: K extends OptionalKeys<T> ? T[K] | undefined : T[K] };

/** `base` with `overrides` applied: a key given `undefined` is left out. */
export function withOverrides<T extends object>(base: T, overrides: Overrides<T>): T {
  const made = new Map<string, unknown>(Object.entries(base));
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) made.delete(key);
    else made.set(key, value);
  }
  // Each key is base's, or an override's of a key of T; only optional keys are removed.
  return Object.fromEntries(made) as T;
}
