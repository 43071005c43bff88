// One container of a rendered Deployment, run from the unpacked image the way
// the kubelet would run it, without a kubelet: its own network and mount
// namespaces (pod-init.ts), the image's entrypoint with the Deployment's args,
// env with fieldRefs resolved, KUBERNETES_SERVICE_HOST/PORT, the
// ServiceAccount's token (TokenRequest) and the API server's CA mounted at
// /var/run/secrets/kubernetes.io/serviceaccount, the pod's user, a read-only
// root. Needs root (namespaces, mounts, chroot).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sumOfMetric, type RoleProcess } from './controller-process.js';
import type { OciImageConfig } from './oci-archive.js';
import type { PodInit } from './pod-init.js';
import { forwardTo } from './socket-forward.js';

/** The parts of a rendered Deployment the kubelet reads to start its container. */
export interface DeploymentSpec {
  metadata: { name: string; namespace: string };
  spec: {
    template: {
      spec: {
        serviceAccountName: string;
        securityContext?: { runAsUser?: number; runAsGroup?: number };
        containers: ContainerSpec[];
      };
    };
  };
}

export interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports?: { containerPort: number; name?: string }[];
  livenessProbe?: { httpGet?: { path: string; port: number } };
  readinessProbe?: { httpGet?: { path: string; port: number } };
  securityContext?: { runAsUser?: number; runAsGroup?: number; readOnlyRootFilesystem?: boolean };
}

export interface ImagePodOptions {
  /** The unpacked image root (oci-archive.ts unpackImage). */
  readonly rootfs: string;
  readonly image: OciImageConfig;
  readonly deployment: DeploymentSpec;
  /** A token the API server issued for the Deployment's ServiceAccount. */
  readonly token: string;
  /** The API server, on host loopback: https://127.0.0.1:<port>. */
  readonly server: string;
  /** Its CA certificate (PEM). */
  readonly caCert: string;
  /** More host loopback ports the pod reaches (vcsim). @default none */
  readonly hostPorts?: readonly number[];
}

/** A pod's process seen as a RoleProcess: health and metrics on the pod's own ports. */
export interface ImagePod extends RoleProcess {
  readonly name: string;
  /** GET a probe path on a pod port, as the kubelet does. */
  get(port: number, path: string): Promise<[number, string]>;
}

function resolveEnv(container: ContainerSpec, pod: { name: string; namespace: string }): Record<string, string> {
  const fields: Record<string, string> = { 'metadata.name': pod.name, 'metadata.namespace': pod.namespace };
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    const value = e.value ?? (e.valueFrom?.fieldRef ? fields[e.valueFrom.fieldRef.fieldPath] : undefined);
    if (value === undefined) throw new Error(`env ${e.name} of container ${container.name}: only values and metadata fieldRefs are supported here`);
    env[e.name] = value;
  }
  return env;
}

function flagValue(args: readonly string[], flag: string): number | undefined {
  const arg = args.find((a) => a.startsWith(`${flag}=`));
  return arg ? Number(arg.slice(flag.length + 1)) : undefined;
}

function unixGet(socketPath: string, path: string): Promise<[number, string]> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, timeout: 10_000 }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve([res.statusCode ?? 0, body]));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: timeout`)));
    req.on('error', reject);
    req.end();
  });
}

/** Start the Deployment's `manager` container; resolves once the process runs (not once it is ready). */
export async function startImagePod(options: ImagePodOptions): Promise<ImagePod> {
  const { deployment, image } = options;
  const podSpec = deployment.spec.template.spec;
  const container = podSpec.containers.find((c) => c.name === 'manager');
  if (!container) throw new Error(`Deployment ${deployment.metadata.name} has no container "manager"`);
  const name = `${deployment.metadata.name}-${Math.random().toString(36).slice(2, 7)}`;
  const namespace = deployment.metadata.namespace;
  const dir = mkdtempSync(join(tmpdir(), 'banlieue-pod-'));

  const sa = join(dir, 'serviceaccount');
  const sockets = join(dir, 'sockets');
  for (const d of [sa, sockets]) mkdirSync(d);
  writeFileSync(join(sa, 'token'), options.token);
  writeFileSync(join(sa, 'ca.crt'), options.caCert);
  writeFileSync(join(sa, 'namespace'), namespace);

  const server = new URL(options.server);
  const apiPort = Number(server.port);
  const hostPorts = [apiPort, ...(options.hostPorts ?? [])];
  // The host side of each carried port: a unix socket to host loopback.
  const forwarders: Server[] = hostPorts.map((port) => forwardTo(() => connect(port, '127.0.0.1')).listen(join(sockets, `host-${port}.sock`)));

  // Kubernetes: command replaces the image's Entrypoint, args its Cmd.
  const argv = [...(container.command ?? image.Entrypoint ?? []), ...(container.args ?? image.Cmd ?? [])];
  const healthPorts = [container.livenessProbe?.httpGet?.port, container.readinessProbe?.httpGet?.port].filter((p): p is number => p !== undefined);
  const metricsPort = flagValue(container.args ?? [], '--metrics-port');
  const podPorts = [...new Set([...(container.ports ?? []).map((p) => p.containerPort), ...healthPorts, ...(metricsPort ? [metricsPort] : [])])];
  const imageEnv = Object.fromEntries((image.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const [imageUid, imageGid] = (image.User ?? '0:0').split(':').map(Number);
  const init: PodInit = {
    rootfs: options.rootfs,
    serviceAccountDir: sa,
    socketDir: sockets,
    hostPorts,
    podPorts,
    argv,
    env: {
      ...imageEnv,
      HOSTNAME: name,
      // What the kubelet sets for the `kubernetes` Service; here it is the API server itself.
      KUBERNETES_SERVICE_HOST: server.hostname,
      KUBERNETES_SERVICE_PORT: String(apiPort),
      KUBERNETES_SERVICE_PORT_HTTPS: String(apiPort),
      ...resolveEnv(container, { name, namespace }),
    },
    uid: container.securityContext?.runAsUser ?? podSpec.securityContext?.runAsUser ?? imageUid ?? 0,
    gid: container.securityContext?.runAsGroup ?? podSpec.securityContext?.runAsGroup ?? imageGid ?? 0,
  };

  const child = spawn(
    'unshare',
    ['--net', '--mount', '--', process.execPath, '--import', 'tsx', fileURLToPath(new URL('./pod-init.ts', import.meta.url)), JSON.stringify(init)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: kill() takes the container with it, as a crash of the pod would.
      detached: true,
    },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      for (const f of forwarders) f.close();
      rmSync(dir, { recursive: true, force: true });
      resolve(code);
    }),
  );
  const get = (port: number, path: string): Promise<[number, string]> => unixGet(join(sockets, `pod-${port}.sock`), path);
  const healthPort = healthPorts[0] ?? 0;
  return {
    name,
    healthPort,
    metricsPort: metricsPort ?? 0,
    child,
    logs: () => output,
    get,
    health: (path) => get(healthPort, path),
    metric: async (metric, labels = {}) => sumOfMetric((await get(metricsPort ?? 0, '/metrics'))[1], metric, labels),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
  };
}
