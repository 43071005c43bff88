// A role's own way to the API server: a TCP relay on loopback, with a
// kubeconfig of its own, that a test can cut (every connection through it
// reset, new ones refused) and restore. A role cut off misses what happens
// meanwhile, as one whose watches broke (a network blip, an API server that
// tore its watches down) would.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

export interface ApiLink {
  /** A copy of the kubeconfig given, its server the relay. */
  readonly kubeconfigPath: string;
  /** Resets every connection through the relay and refuses new ones until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

type Kubeconfig = { clusters: { cluster: { server: string } }[] };

/** A relay to the server of `kubeconfigPath` (one cluster, on loopback); its certificate names the loopback address, so TLS passes through. */
export async function openApiLink(kubeconfigPath: string): Promise<ApiLink> {
  const config = parse(readFileSync(kubeconfigPath, 'utf8')) as Kubeconfig;
  const cluster = config.clusters[0]?.cluster;
  if (!cluster) throw new Error(`${kubeconfigPath} names no cluster`);
  const target = new URL(cluster.server);
  const pairs = new Set<[Socket, Socket]>();
  let open = true;
  const server: Server = createServer((inbound) => {
    if (!open) return void inbound.resetAndDestroy();
    const outbound = createConnection({ host: target.hostname, port: Number(target.port) });
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    for (const s of pair) s.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-api-link-'));
  const path = join(dir, 'kubeconfig');
  cluster.server = `https://127.0.0.1:${port}`;
  writeFileSync(path, stringify(config));
  return {
    kubeconfigPath: path,
    cut: () => {
      open = false;
      for (const [inbound, outbound] of pairs) {
        inbound.resetAndDestroy();
        outbound.destroy();
      }
      pairs.clear();
    },
    restore: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const [inbound, outbound] of pairs) {
        inbound.destroy();
        outbound.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
