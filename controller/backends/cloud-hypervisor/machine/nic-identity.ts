// Names and MACs of a machine's NICs, derived from its UUID (pure), so every
// pass, a restarted provider and the deletion all find the same taps, and the
// guest keeps its MAC (and so its DHCP lease and neighbour entry) across VMM
// restarts. Nothing of them needs to be stored.
import { derivedMac as macFrom } from '../../derived-mac.js';

/** At most 16 NICs (the CRD's maxItems): one hex digit of index in the tap name. */
export const MAX_NICS = 16;

/**
 * `bch<10 hex of the UUID><index in hex>`: 14 bytes, within Linux's 15-byte interface
 * names. 40 bits of UUID keep two machines of one host apart.
 */
export function tapName(uuid: string, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NICS) throw new RangeError(`NIC index ${index} is not 0-${MAX_NICS - 1}`);
  return `bch${uuid.replaceAll('-', '').slice(0, 10)}${index.toString(16)}`;
}

/**
 * A locally administered unicast MAC (`02:…`) from the UUID and NIC index:
 * the first five bytes of sha256("<uuid>/<index>").
 */
export function derivedMac(uuid: string, index: number): string {
  return macFrom('02', `${uuid}/${index}`);
}

/** The NIC's MAC: the spec's (lower-cased) when set, else derived. */
export function macOf(uuid: string, index: number, specMac: string | undefined): string {
  return specMac === undefined ? derivedMac(uuid, index) : specMac.toLowerCase();
}
