// A NIC's MAC derived from a seed (its machine's UUID and the NIC), never
// random: the guest's network-config, written before the VM exists and
// matching NICs by MAC, and the VM agree; a VM defined again after a crash
// gets the same MACs; the guest keeps its DHCP lease. Each backend picks its
// prefix (an OUI, or `02`, locally administered unicast) and its seed.
import { createHash } from 'node:crypto';

/** `prefix` (whole bytes, e.g. `02` or `bc:24:11`) followed by the first bytes of sha256(seed), six bytes in all. */
export function derivedMac(prefix: string, seed: string): string {
  const head = prefix.toLowerCase().split(':');
  if (head.length < 1 || head.length > 5 || !head.every((b) => /^[0-9a-f]{2}$/.test(b))) throw new RangeError(`MAC prefix "${prefix}" is not 1-5 bytes`);
  const tail = [
    ...createHash('sha256')
      .update(seed)
      .digest()
      .subarray(0, 6 - head.length),
  ].map((byte) => byte.toString(16).padStart(2, '0'));
  return [...head, ...tail].join(':');
}
