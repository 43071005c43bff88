// A machine's status.addresses (CAPI MachineAddress) from the IPs a backend
// found: lower-case, each once, in the order found (primary first), without
// loopback and link-local ones. Which IPs a backend offers (its own NICs'
// first) is its own rule; how many fit in the status, the reconciler's.
import type { MachineAddress } from '../../infra/api/common.js';

const NOT_ROUTABLE = /^(fe[89ab][0-9a-f]:|169\.254\.|127\.|::1$|::ffff:127\.)/i;

export function internalAddresses(ips: Iterable<string | undefined>): MachineAddress[] {
  const usable = [...ips].filter((ip): ip is string => !!ip && !NOT_ROUTABLE.test(ip)).map((ip) => ip.toLowerCase());
  return [...new Set(usable)].map((address) => ({ type: 'InternalIP', address }));
}
