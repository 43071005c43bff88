// A byte pipe between two sockets, for carrying TCP over unix sockets between
// network namespaces (pod-sandbox.ts on the host, pod-init.ts in the pod).
import { createServer, type Server, type Socket } from 'node:net';

/** A server that carries each accepted connection to the socket `dial` opens; either side closing or failing ends both. */
export function forwardTo(dial: () => Socket): Server {
  return createServer((inbound) => {
    const outbound = dial();
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
}
