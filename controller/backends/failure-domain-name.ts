// The failure domain name a backend derives from a Provider and its inventory
// (`<provider>-<datacenter>-<cluster>`, `<provider>-<node>`, a libvirt
// host's Provider): a DNS label, at most 63 characters. A longer one is cut and ended
// by an FNV-1a hash of the whole slug, so two Providers or clusters that share
// a long prefix still publish two failure domains.
import { boundedName, LABEL_VALUE_MAX } from '../../infra/api/bounded-name.js';

/** Lower-case, runs of anything but [a-z0-9] become one '-', no '-' at either end; over 63 characters, cut with a hash. */
export function failureDomainLabel(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return boundedName(slug, LABEL_VALUE_MAX, fnv1a32);
}

/** 8 hex digits: the suffix vSphere and Proxmox failure domain names have had since they were first published. */
function fnv1a32(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
