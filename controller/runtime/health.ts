// /livez and /readyz (health port) and /metrics (metrics port). /readyz tells
// whether this process leads or stands by, so `kubectl exec ... curl` shows it.
// Health listens where the kubelet probes it (the pod IP); metrics, which
// nothing authenticates, on loopback unless the operator exposes them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export type Readiness = 'starting' | 'leader' | 'standby' | 'unreachable';

export interface HealthServers {
  readonly healthPort: number;
  readonly metricsPort: number;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startHealthServers(options: {
  healthPort: number;
  metricsPort: number;
  /** Address of the health server. @default 0.0.0.0 */
  host?: string;
  /** Address of the metrics server. @default 127.0.0.1 */
  metricsHost?: string;
  readiness: () => Readiness;
  metrics: Metrics;
}): Promise<HealthServers> {
  const health = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/livez' || path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    if (path === '/readyz') {
      const state = options.readiness();
      const ready = state === 'leader' || state === 'standby';
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(state);
      return;
    }
    res.writeHead(404).end();
  });
  const metrics = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    options.metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': options.metrics.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500).end(String(err)),
    );
  });
  const healthPort = await listen(health, options.healthPort, options.host ?? '0.0.0.0');
  const metricsPort = await listen(metrics, options.metricsPort, options.metricsHost ?? '127.0.0.1');
  return {
    healthPort,
    metricsPort,
    close: async () => {
      await Promise.all([health, metrics].map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
