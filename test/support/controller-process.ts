// `banlieue controller` as a local process, as `make dev-cluster` users run it
// (from the working tree's bundle: cli-bundle.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { roleRuntimeEnv } from '../../infra/install/role-runtime.js';
import { banlieueCommand } from './bundles.js';
import { StopWaiting, waitFor } from './wait.js';

export interface RoleProcess {
  readonly healthPort: number;
  readonly metricsPort: number;
  readonly child: ChildProcess;
  logs(): string;
  /** GET a path of the health server: [status, body]. */
  health(path: string): Promise<[number, string]>;
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL: a crash. */
  kill(): Promise<void>;
}

/** The sum of a metric's samples in a Prometheus text exposition, over the samples carrying `labels`. */
export function sumOfMetric(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => wanted.every((w) => l.includes(w)))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

/** `banlieue provider <backend>` for one namespace without leader election, polling each second. */
export function providerRoleArgs(backend: string, kubeconfig: string, ns: string, rediscoverSeconds: number, extra: readonly string[] = []): string[] {
  return [
    'provider',
    backend,
    '--kubeconfig',
    kubeconfig,
    '--no-leader-elect',
    '--namespace',
    ns,
    '--poll-period',
    '1',
    '--rediscover-period',
    String(rediscoverSeconds),
    ...extra,
  ];
}

export interface StartRoleOptions {
  /** How long the role may take to serve health and metrics; it is killed if it does not. @default 60000 */
  readonly startTimeoutMs?: number;
  /** Variables added to this process's environment for the role (a host's config, as on a host). @default none */
  readonly env?: Readonly<Record<string, string>>;
}

/** A role's command line as a test runs it: its health and metrics on loopback ports the system picks. */
export function roleCommand(args: readonly string[]): Promise<[string, string[]]> {
  return banlieueCommand([...args, '--health-port', '0', '--metrics-port', '0', '--bind-address', '127.0.0.1']);
}

/** The controller of one namespace, without leader election, as most tests run it. */
export function controllerArgs(kubeconfig: string, ns: string, extra: readonly string[] = []): string[] {
  return ['controller', '--kubeconfig', kubeconfig, '--no-leader-elect', '--namespace', ns, ...extra];
}

export async function startRole(args: string[], options: StartRoleOptions = {}): Promise<RoleProcess> {
  // The environment as it is when called (the bundle is awaited before the spawn), with Node's settings as the
  // install's Deployments give them.
  const env = { ...process.env, ...roleRuntimeEnv(), ...options.env };
  // node itself (not npx) so that a kill reaches the process that holds the lease.
  const [node, command] = await roleCommand(args);
  const child = spawn(node, command, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ports = await waitFor(
    'the role to serve health and metrics',
    () => {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new StopWaiting(`the role exited (${child.exitCode ?? child.signalCode}) before serving health and metrics:\n${output}`);
      const line = output.split('\n').find((l) => l.includes('Serving health and metrics'));
      return line ? (JSON.parse(line) as { healthPort: number; metricsPort: number }) : undefined;
    },
    options.startTimeoutMs ?? 60_000,
  ).catch((err: unknown) => {
    // Nobody holds a handle on a role that did not start: it must not run on.
    child.kill('SIGKILL');
    throw err;
  });
  const get = async (port: number, path: string): Promise<[number, string]> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return [res.status, await res.text()];
  };
  return {
    healthPort: ports.healthPort,
    metricsPort: ports.metricsPort,
    child,
    logs: () => output,
    health: (path) => get(ports.healthPort, path),
    metric: async (name, labels = {}) => sumOfMetric((await get(ports.metricsPort, '/metrics'))[1], name, labels),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
