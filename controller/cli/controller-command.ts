// Flags shared by the long-running roles, and `banlieue controller` itself.
import { InvalidArgumentError, Option } from 'commander';
import { DEFAULT_NAMESPACE } from '../../infra/install/install-props.js';
import { loadKubeConfig } from '../runtime/kube-config.js';
import { defaultLogFormat, newLogger, type LogFormat, type LogLevel } from '../runtime/log.js';
import { runRole } from '../runtime/role-runner.js';
import { providerLeaseName } from '../../infra/api/well-known.js';
import type { LabelSelector } from '../../infra/api/meta.js';
import { parseSelector } from '../../infra/api/label-syntax.js';
import { CliError } from './cli-error.js';
import { shardLeaseName } from './shard-lease.js';
import { BUILT_IN_BACKENDS } from '../backends/registry.js';

export function toInt(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${flag} must be a non-negative integer, got "${value}"`);
    return n;
  };
}

/** Options every role takes, defined once. */
export const roleOptions = {
  healthPort: () => new Option('--health-port <port>', 'port of /livez and /readyz').default(8081).argParser(toInt('--health-port')),
  metricsPort: () => new Option('--metrics-port <port>', 'port of /metrics').default(8080).argParser(toInt('--metrics-port')),
  bindAddress: () => new Option('--bind-address <ip>', 'address /livez and /readyz listen on (the kubelet probes the pod IP)').default('0.0.0.0'),
  // /metrics is unauthenticated: loopback unless the operator exposes it (BanlieueInstallProps.exposeMetrics).
  metricsBindAddress: () =>
    new Option('--metrics-bind-address <ip>', 'address /metrics listens on; 0.0.0.0 serves it, unauthenticated, on the pod IP').default('127.0.0.1'),
  leaderElectionNamespace: () =>
    new Option('--leader-election-namespace <ns>', 'namespace of the Lease').default(process.env.POD_NAMESPACE ?? DEFAULT_NAMESPACE),
  leaseDuration: () => new Option('--lease-duration <seconds>', 'leader Lease duration').default(15).argParser(toInt('--lease-duration')),
  logLevel: () => new Option('--log-level <level>', 'log level').choices(['debug', 'info', 'warn', 'error']).default('info'),
  logFormat: () =>
    new Option('--log-format <format>', 'log format: one line of text per record, or JSON (default: text on a terminal, else json)').choices(['text', 'json']),
  providerSelector: () =>
    new Option(
      '--provider-selector <selector>',
      'serve only the Providers of the backend with these labels (kubectl -l syntax, e.g. group=eu or group in (a,b)): one shard of several provider Deployments, each with its own Lease; a Provider relabelled to another shard is handed over (docs/install.md)',
    ).argParser(selectorFlag('--provider-selector')),
  namespaceSelector: () =>
    new Option(
      '--namespace-selector <selector>',
      'serve only the namespaces with these labels (kubectl -l syntax): one shard of several controller Deployments, each with its own Lease (docs/install.md)',
    ).argParser(selectorFlag('--namespace-selector')),
};

/** A label selector flag, parsed as kubectl's -l; a bad one is refused naming the flag. */
function selectorFlag(flag: string): (value: string) => LabelSelector {
  return (value) => {
    try {
      return parseSelector(value);
    } catch (err) {
      throw new InvalidArgumentError(`${flag}: ${(err as Error).message}`);
    }
  };
}

export interface RoleFlags {
  kubeconfig?: string;
  context?: string;
  healthPort: number;
  metricsPort: number;
  bindAddress: string;
  metricsBindAddress: string;
  leaderElect: boolean;
  leaderElectionNamespace: string;
  leaderElectionId: string;
  leaderElectionIdentity?: string;
  leaseDuration: number;
  logLevel: LogLevel;
  logFormat?: LogFormat;
}

export interface ControllerFlags extends RoleFlags {
  namespace?: string;
  namespaceSelector?: LabelSelector;
  concurrency: number;
  resyncPeriod: number;
  maxRecreatesPerMinute: number;
}

export interface ProviderFlags extends RoleFlags {
  namespace?: string;
  provider?: string;
  providerSelector?: LabelSelector;
  concurrency: number;
  rediscoverPeriod: number;
  discoverTimeout: number;
  machineConcurrency: number;
  pollPeriod: number;
  resyncPeriod: number;
}

/** The RoleOptions every role derives from its flags. */
function roleOptionsFrom(role: string, flags: RoleFlags): Parameters<typeof runRole>[0] {
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(flags.kubeconfig, flags.context);
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  const leaseMs = flags.leaseDuration * 1000;
  const identity = flags.leaderElectionIdentity ?? process.env.POD_NAME;
  return {
    role,
    kubeConfig,
    log: newLogger({ role, level: flags.logLevel, format: flags.logFormat ?? defaultLogFormat() }),
    healthPort: flags.healthPort,
    metricsPort: flags.metricsPort,
    bindAddress: flags.bindAddress,
    metricsBindAddress: flags.metricsBindAddress,
    leaderElect: flags.leaderElect,
    leaderElectionNamespace: flags.leaderElectionNamespace,
    leaderElectionId: flags.leaderElectionId,
    ...(identity ? { identity } : {}),
    leaseDurationMs: leaseMs,
    renewMs: Math.max(1000, Math.round(leaseMs / 3)),
    retryMs: Math.max(500, Math.round(leaseMs / 7)),
  };
}

/** The Lease (and default Event identity) of a provider role (well-known.ts: the controller reads it too). */
export { providerLeaseName };

/** A provider role's Lease: its backend's, its Provider's with --provider, its shard's with --provider-selector. */
export function providerRoleLeaseName(backend: string, flags: Pick<ProviderFlags, 'provider' | 'providerSelector'>): string {
  return flags.providerSelector ? shardLeaseName(providerLeaseName(backend), flags.providerSelector) : providerLeaseName(backend, flags.provider);
}

/** The controller's Lease, or its shard's with --namespace-selector. */
export function controllerLeaseName(namespaceSelector?: LabelSelector): string {
  return namespaceSelector ? shardLeaseName(CONTROLLER_LEASE, namespaceSelector) : CONTROLLER_LEASE;
}

const CONTROLLER_LEASE = 'banlieue-controller';

export async function runProviderCommand(backendName: string, flags: ProviderFlags): Promise<void> {
  const descriptor = BUILT_IN_BACKENDS.get(backendName);
  if (!descriptor) {
    throw new CliError(`provider ${backendName}: no such backend (backends: ${BUILT_IN_BACKENDS.withProviderRole().join(', ')})`);
  }
  if (!descriptor.createBackend) {
    throw new CliError(
      `provider ${backendName}: this backend's provider role is not built yet (available: ${BUILT_IN_BACKENDS.withProviderRole().join(', ')})`,
    );
  }
  // A Provider's name is unique in its namespace only: a scope without one would serve every namespace's of that name.
  if (flags.provider !== undefined && flags.namespace === undefined)
    throw new CliError(`provider ${backendName}: --provider ${flags.provider} needs --namespace (the Provider's namespace)`);
  if (flags.provider !== undefined && flags.providerSelector !== undefined)
    throw new CliError(`provider ${backendName}: --provider and --provider-selector exclude each other (one Provider, or a shard of them)`);
  const options = roleOptionsFrom(`provider-${backendName}`, flags);
  // A shard's claims carry its Lease name: another shard reads that Lease to tell whether it still runs.
  const shard = flags.providerSelector ? { selector: flags.providerSelector, shard: flags.leaderElectionId } : undefined;
  const { runProviderRole } = await import('./provider-role.js');
  await runRole(options, (ctx) =>
    runProviderRole(ctx, descriptor, {
      ...(flags.namespace ? { namespace: flags.namespace } : {}),
      ...(flags.provider !== undefined ? { provider: flags.provider } : {}),
      ...(shard ? { shard, leaseNamespace: flags.leaderElectionNamespace } : {}),
      concurrency: flags.concurrency,
      rediscoverMs: flags.rediscoverPeriod * 1000,
      discoverTimeoutMs: Math.max(1, flags.discoverTimeout) * 1000,
      machineConcurrency: flags.machineConcurrency,
      machineTimings: { pollMs: Math.max(1, flags.pollPeriod) * 1000, resyncMs: Math.max(1, flags.resyncPeriod) * 1000 },
      identity: options.identity ?? providerRoleLeaseName(backendName, flags),
    }),
  );
}

export async function runControllerCommand(flags: ControllerFlags): Promise<void> {
  if (flags.namespace !== undefined && flags.namespaceSelector !== undefined)
    throw new CliError('controller: --namespace and --namespace-selector exclude each other (one namespace, or a shard of them)');
  const options = roleOptionsFrom('controller', flags);
  const { runControllerRole } = await import('./controller-role.js');
  await runRole(options, (ctx) =>
    runControllerRole(ctx, {
      backends: BUILT_IN_BACKENDS,
      leaseNamespace: flags.leaderElectionNamespace,
      ...(flags.namespace ? { namespace: flags.namespace } : {}),
      // A shard's claims on namespaces carry its Lease name: another shard reads that Lease to tell whether it still runs.
      ...(flags.namespaceSelector ? { namespaceShard: { selector: flags.namespaceSelector, shard: flags.leaderElectionId } } : {}),
      concurrency: flags.concurrency,
      resyncMs: flags.resyncPeriod * 1000,
      recreatesPerMinute: flags.maxRecreatesPerMinute,
      identity: options.identity ?? controllerLeaseName(flags.namespaceSelector),
    }),
  );
}
