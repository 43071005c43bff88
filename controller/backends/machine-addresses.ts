// A machine's status.addresses (CAPI MachineAddress) from the IPs a backend
// found: lower-case, each once, in the order found (primary first), without
// loopback and link-local ones. Which NICs are the machine's own is the
// backend's rule; how many addresses fit in the status, the reconciler's.
import type { MachineAddress } from '../../infra/api/machine-fields.js';

const NOT_ROUTABLE = /^(fe[89ab][0-9a-f]:|169\.254\.|127\.|::1$|::ffff:127\.)/i;

export function internalAddresses(ips: Iterable<string | undefined>): MachineAddress[] {
  const usable = [...ips].filter((ip): ip is string => !!ip && !NOT_ROUTABLE.test(ip)).map((ip) => ip.toLowerCase());
  return [...new Set(usable)].map((address) => ({ type: 'InternalIP', address }));
}

/**
 * The addresses of the machine's own NICs; every interface's only when those
 * have none (the IP on a guest bridge). A guest also reports interfaces of its
 * own: a Kubernetes node's kube-ipvs0 holds every Service IP, CNI bridges, docker0.
 */
export function ownNicAddresses(own: Iterable<string | undefined>, all: Iterable<string | undefined>): MachineAddress[] {
  const addresses = internalAddresses(own);
  return addresses.length > 0 ? addresses : internalAddresses(all);
}
