// A host loopback port offered inside a network namespace of the test's own
// (qemu-host.ts), at an address of that namespace: guests on its bridge dial
// the bridge's address and reach a server that listens only on the host's
// 127.0.0.1. Inside, namespace-listener.ts listens and writes each connection
// to a unix socket in the run's directory; here, a server on that socket
// carries it to the loopback port. Nothing listens outside loopback and the
// namespace.
import { connect, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GuestNetworkHost } from '../peers/libvirt/qemu-host.js';
import { programBundle } from './bundles.js';
import { forwardTo } from './socket-forward.js';
import { StopWaiting, waitFor } from './wait.js';

export interface NamespaceListener {
  /** Stops both sides. */
  stop(): Promise<void>;
}

/** Serves the host's `127.0.0.1:loopbackPort` at `inside.address:inside.port` in `host`'s network namespace. */
export async function listenInNamespace(
  host: Pick<GuestNetworkHost, 'dir' | 'spawn'>,
  inside: { readonly address: string; readonly port: number },
  loopbackPort: number,
): Promise<NamespaceListener> {
  const socketPath = join(host.dir, `forward-${inside.port}.sock`);
  const outside: Server = forwardTo(() => connect(loopbackPort, '127.0.0.1'));
  await new Promise<void>((resolve, reject) => {
    outside.once('error', reject);
    outside.listen(socketPath, resolve);
  });
  const program = programBundle(fileURLToPath(new URL('./namespace-listener.ts', import.meta.url)));
  // stdin is the inside program's lifeline: closed by stop(), or by the kernel if this process dies.
  const child = host.spawn(process.execPath, [program, inside.address, String(inside.port), socketPath], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin?.end();
      await exited;
    }
    await new Promise((resolve) => outside.close(resolve));
  };
  try {
    await waitFor(
      `a listener on ${inside.address}:${inside.port} in the namespace`,
      () => {
        if (child.exitCode !== null) throw new StopWaiting(`namespace-listener exited (${child.exitCode}): ${output}`);
        return output.includes('listening') || undefined;
      },
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
