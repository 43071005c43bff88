// A typed reference to a banlieue object: a construct of this app, or one made
// elsewhere named by `fromName`. Its kind is a literal, so a VMImage cannot be
// given where a VMClass is meant.
import { apiVersionOf, type KindDefinition } from '../api/kind.js';

/** An object of kind `Kind`, as another object's spec refers to it. */
export interface KindReference<Kind extends string> {
  /** The referenced object's API version, e.g. banlieue.io/v1alpha1. */
  readonly apiVersion: string;
  /** The referenced object's kind. */
  readonly kind: Kind;
  /** The referenced object's name. */
  readonly name: string;
}

/** A reference to an object of `def`'s kind that this app does not create. */
export function referenceByName<Kind extends string>(def: KindDefinition, name: string): KindReference<Kind> {
  // The caller names the kind of `def` as a literal; KindDefinition keeps it as a string.
  return Object.freeze({ apiVersion: apiVersionOf(def), kind: def.kind as Kind, name });
}

/**
 * The wire `{name}` of `ref`, after checking (for plain JavaScript callers)
 * that it is of the kind the prop wants; the message names the prop and the value.
 */
export function toLocalReference<Kind extends string>(owner: string, prop: string, want: Kind, ref: KindReference<Kind>): { name: string } {
  if ((ref as { kind?: unknown }).kind !== want) {
    throw new Error(`${owner}: ${prop} must be a ${want}, got ${String((ref as { kind?: unknown }).kind)} ${String(ref.name)}`);
  }
  return { name: ref.name };
}
