// What every long-running role (controller, provider <backend>) shares:
// health and metrics servers, leader election, graceful shutdown on
// SIGTERM/SIGINT. The role itself only says what to run while leading.
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { PACKAGE_VERSION } from '../../infra/version.js';
import { startHealthServers, type Readiness } from './health.js';
import { KubeApi } from './kube-api.js';
import { LeaderElector } from './leader-election.js';
import type { Logger } from './log.js';
import { Metrics } from './metrics.js';

export interface RoleOptions {
  readonly role: string;
  readonly kubeConfig: KubeConfig;
  readonly log: Logger;
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly bindAddress: string;
  /** Address of /metrics (loopback unless exposed). */
  readonly metricsBindAddress: string;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly identity?: string;
  readonly leaseDurationMs?: number;
  readonly renewMs?: number;
  readonly retryMs?: number;
}

export interface RoleContext {
  readonly api: KubeApi;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** Aborted when the process stops leading or shuts down. */
  readonly signal: AbortSignal;
}

/** Run a role until SIGTERM/SIGINT (resolves) or lost leadership (rejects). */
export async function runRole(options: RoleOptions, lead: (ctx: RoleContext) => Promise<void>): Promise<void> {
  const metrics = new Metrics();
  const api = new KubeApi(options.kubeConfig, {
    userAgent: `banlieue/${PACKAGE_VERSION} (${options.role})`,
    onWrite: (verb) => metrics.apiWrites.inc({ verb }),
  });
  const shutdown = new AbortController();
  // Every informer's watch and backoff listens on the same signal.
  setMaxListeners(0, shutdown.signal);
  const onSignal = (signal: string): void => {
    options.log.info({ signal }, 'Shutting down');
    shutdown.abort();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));

  let readiness: Readiness = 'starting';
  const elector = options.leaderElect
    ? new LeaderElector(
        api,
        {
          namespace: options.leaderElectionNamespace,
          name: options.leaderElectionId,
          identity: options.identity ?? process.env.POD_NAME ?? `${hostname()}-${process.pid}`,
          ...(options.leaseDurationMs ? { leaseDurationMs: options.leaseDurationMs } : {}),
          ...(options.renewMs ? { renewMs: options.renewMs } : {}),
          ...(options.retryMs ? { retryMs: options.retryMs } : {}),
        },
        options.log,
        (leading) => metrics.leader.set({ role: options.role }, leading ? 1 : 0),
      )
    : undefined;
  const servers = await startHealthServers({
    healthPort: options.healthPort,
    metricsPort: options.metricsPort,
    host: options.bindAddress,
    metricsHost: options.metricsBindAddress,
    metrics,
    readiness: () => elector?.readiness() ?? readiness,
  });
  options.log.info({ healthPort: servers.healthPort, metricsPort: servers.metricsPort, leaderElect: options.leaderElect }, 'Serving health and metrics');

  let running: Promise<void> = Promise.resolve();
  let failure: unknown;
  const start = (signal: AbortSignal): Promise<void> => {
    running = lead({ api, metrics, log: options.log, signal }).catch((err: unknown) => {
      options.log.error({ err: err instanceof Error ? err.message : String(err) }, 'Role failed');
      // The process exits non-zero (e.g. a cache that never synced): its supervisor restarts it.
      failure ??= err;
      shutdown.abort();
    });
    return running;
  };
  try {
    if (elector) await elector.run(shutdown.signal, start);
    else {
      readiness = 'leader';
      metrics.leader.set({ role: options.role }, 1);
      void start(shutdown.signal);
      await new Promise<void>((resolve) => shutdown.signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  } finally {
    await running;
    await servers.close();
  }
  if (failure !== undefined) throw failure;
}
