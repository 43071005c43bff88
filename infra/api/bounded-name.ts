// A name cut to a limit some component sets (an object or label value, a
// field manager, a failure domain, a libvirt domain name): short names stay
// as they are; a longer one becomes its start and a hash of the whole, so it
// is the same on every pass and two names cut alike still differ. The start
// loses trailing separators, so a valid DNS subdomain stays one (no `.-`).
import { createHash } from 'node:crypto';

/** The longest object name (a DNS subdomain). */
export const OBJECT_NAME_MAX = 253;
/** The longest label value, and failure domain name. */
export const LABEL_VALUE_MAX = 63;

/** The hash a cut name ends with, of the whole name. */
export type NameHash = (whole: string) => string;

export const sha256Hex =
  (length: number): NameHash =>
  (whole) =>
    createHash('sha256').update(whole).digest('hex').slice(0, length);

export function boundedName(name: string, max: number, hash: NameHash = sha256Hex(8)): string {
  if (name.length <= max) return name;
  const suffix = hash(name);
  return `${name.slice(0, max - suffix.length - 1).replace(/[-._]+$/, '')}-${suffix}`;
}
