// Where the CAPI contract e2e runs. `local` (make e2e-capi): a real
// kube-apiserver on loopback, CAPI's CRDs and RBAC from the Go module cache,
// the real CAPI manager as a process serving CAPI's webhooks (capi-webhooks.ts),
// banlieue installed by the real clusterctl from a local repository. `kind`
// (make kind-e2e-capi): a kind cluster where `clusterctl init` installed CAPI
// (its webhooks included) and banlieue. The test code is the same.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, stringify } from 'yaml';
import { buildTools, ControlPlane, freePort, type Tools } from '../support/control-plane.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import { waitFor } from '../support/wait.js';
import { capiCrdsWithConversion, capiWebhookConfigurations, createWebhookEndpoint, waitForCapiWebhooks } from './capi-webhooks.js';

const run = promisify(execFile);
export const RELEASE_DIR = 'target/clusterctl/release';
const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
export const BANLIEUE_TAG = `v${PACKAGE_VERSION}`;

export interface CapiEnvironment {
  /** Admin kubeconfig, for the test's own reads and writes. */
  readonly kubeconfig: string;
  readonly versions: { capi: string; clusterctl: string };
  kubectl(args: string[], input?: string): Promise<string>;
  /** Everything the CAPI manager logged so far. */
  capiLogs(): string;
  /**
   * The real clusterctl with banlieue's release assets as its provider
   * repository (every file of target/clusterctl/release: components, metadata,
   * cluster templates); `env` adds clusterctl variables. Resolves to stdout.
   */
  clusterctl(args: string[], env?: Record<string, string>): Promise<string>;
  /** `banlieue provider <backend>` with the identity and RBAC the components give it; stopped by stop(). */
  startProvider(backend: string, extraArgs?: string[]): Promise<RoleProcess>;
  stop(): Promise<void>;
}

/** A kubeconfig for ServiceAccount `ns/name`, so that RBAC really applies to the process using it. */
async function serviceAccountKubeconfig(cp: ControlPlane, ns: string, name: string): Promise<string> {
  const request = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 86400 } });
  const out = await cp.kubectl(['create', '--raw', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, '-f', '-'], request);
  const token = (JSON.parse(out) as { status: { token: string } }).status.token;
  const path = join(cp.dir, `${ns}-${name}.kubeconfig`);
  writeFileSync(path, cp.kubeconfig(`system:serviceaccount:${ns}:${name}`, token));
  return path;
}

/** CAPI's manager RBAC as its release installs it: manager-role aggregated, bound through the aggregated role only. */
function capiRbac(moduleDir: string): string {
  /* eslint-disable @typescript-eslint/no-explicit-any -- CAPI's RBAC YAML, read and edited as it is */
  const read = (file: string): Record<string, any>[] =>
    parseAllDocuments(readFileSync(join(moduleDir, 'core/config/rbac', file), 'utf8')).map((d) => d.toJS() as Record<string, any>);
  /* eslint-enable @typescript-eslint/no-explicit-any */
  const [managerRole] = read('role.yaml');
  const [aggregated] = read('aggregated_role.yaml');
  if (!managerRole || !aggregated) throw new Error('CAPI RBAC manifests not found in the module cache');
  managerRole.metadata = { name: 'capi-manager-role', labels: { 'cluster.x-k8s.io/aggregate-to-manager': 'true' } };
  aggregated.metadata = { name: 'capi-aggregated-manager-role' };
  const docs = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'capi-system' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'capi-manager', namespace: 'capi-system' } },
    managerRole,
    aggregated,
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'capi-manager-rolebinding' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'capi-aggregated-manager-role' },
      subjects: [{ kind: 'ServiceAccount', name: 'capi-manager', namespace: 'capi-system' }],
    },
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

/** clusterctl, offline, with `env` added to ours; resolves to its stdout. */
function runClusterctl(clusterctl: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  return run(clusterctl, args, {
    // clusterctl looks up its latest release online unless told not to.
    env: { ...process.env, CLUSTERCTL_DISABLE_VERSIONCHECK: 'true', ...env },
    maxBuffer: 64 << 20,
  }).then((r) => r.stdout);
}

/** banlieue's release assets in a local repository, and clusterctl's config naming it. */
function clusterctlRepository(dir: string): string {
  for (const file of ['infrastructure-components.yaml', 'metadata.yaml']) {
    if (!existsSync(join(RELEASE_DIR, file))) throw new Error(`${RELEASE_DIR}/${file} missing: run make clusterctl-components`);
  }
  const version = join(dir, 'repository', 'infrastructure-banlieue', BANLIEUE_TAG);
  mkdirSync(version, { recursive: true });
  for (const file of readdirSync(RELEASE_DIR)) copyFileSync(join(RELEASE_DIR, file), join(version, file));
  const config = join(dir, 'clusterctl.yaml');
  writeFileSync(
    config,
    stringify({ providers: [{ name: 'banlieue', type: 'InfrastructureProvider', url: `file://${join(version, 'infrastructure-components.yaml')}` }] }),
  );
  return config;
}

/**
 * A manager of the CAPI module (the core manager, CABPK) as a process on loopback ports, logging
 * to `logPath`, once its /readyz answers; `extraArgs` after the flags every one of them takes.
 */
export async function startCapiModuleManager(
  name: string,
  binary: string,
  options: { kubeconfig: string; certDir: string; ports: { webhook: number; health: number }; logPath: string; extraArgs?: readonly string[] },
): Promise<ChildProcess> {
  const { kubeconfig, certDir, ports, logPath } = options;
  const child = spawn(binary, [
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    `--webhook-port=${ports.webhook}`,
    `--webhook-cert-dir=${certDir}`,
    `--health-addr=127.0.0.1:${ports.health}`,
    '--diagnostics-address=0',
    '--skip-crd-migration-phases=StorageVersionMigration,CleanupManagedFields',
    ...(options.extraArgs ?? []),
    '-v=2',
  ]);
  const log = createWriteStream(logPath);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  await waitFor(
    `${name} to be ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`${name} exited:\n${readFileSync(logPath, 'utf8').slice(-3000)}`);
      const res = await fetch(`http://127.0.0.1:${ports.health}/readyz`).catch(() => undefined);
      return res?.ok;
    },
    120_000,
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return child;
}

/** The CAPI core manager running against a control plane: its log and how to stop it. */
export interface CapiManager {
  readonly logPath: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * CAPI on `cp` as its release installs it: CRDs whose conversion webhook is the manager, its
 * RBAC, the manager as its ServiceAccount (only the aggregated role: RBAC is really enforced)
 * and its webhooks, registered once it serves them; `extraArgs` are the manager's flags.
 */
export async function startCapi(cp: ControlPlane, tools: Tools, extraArgs: readonly string[] = []): Promise<CapiManager> {
  const ports = { webhook: await freePort(), health: await freePort() };
  const webhook = await createWebhookEndpoint(cp.dir, ports.webhook);
  await cp.kubectl(['apply', '--server-side', '-f', '-'], capiCrdsWithConversion(tools.capiModuleDir, webhook));
  await cp.kubectl(['apply', '--server-side', '-f', '-'], capiRbac(tools.capiModuleDir));
  await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  const logPath = join(cp.dir, 'capi-manager.log');
  const child = await startCapiModuleManager('the CAPI manager', tools.capiManager, {
    kubeconfig: await serviceAccountKubeconfig(cp, 'capi-system', 'capi-manager'),
    certDir: webhook.certDir,
    ports,
    logPath,
    extraArgs,
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  };
  try {
    // Registered once the manager serves them: they refuse everything while it does not.
    await cp.kubectl(['apply', '--server-side', '-f', '-'], capiWebhookConfigurations(tools.capiModuleDir, webhook));
    await waitForCapiWebhooks((args, input) => cp.kubectl(args, input));
  } catch (err) {
    await stop();
    throw err;
  }
  return { logPath, pid: child.pid ?? -1, stop };
}

export async function localEnvironment(): Promise<CapiEnvironment> {
  const tools = await buildTools();
  const cp = await ControlPlane.start(tools);
  let capi: CapiManager | undefined;
  let controller: RoleProcess | undefined;
  const providers: RoleProcess[] = [];
  const capiLog = join(cp.dir, 'capi-manager.log');
  let clusterctlConfig = '';
  // The local repository's clusterctl, with its own home (no user configuration).
  const clusterctl = (args: string[], env: Record<string, string> = {}): Promise<string> =>
    runClusterctl(tools.clusterctl, [...args, '--config', clusterctlConfig], { XDG_CONFIG_HOME: cp.dir, HOME: cp.dir, ...env });
  const stop = async (): Promise<void> => {
    for (const p of providers) await p.stop();
    await controller?.stop();
    await capi?.stop();
    await cp.stop();
  };
  try {
    await applyCrdsFromDist(cp);
    clusterctlConfig = clusterctlRepository(cp.dir);
    const components = await clusterctl(['generate', 'provider', '--infrastructure', `banlieue:${BANLIEUE_TAG}`]);
    await cp.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], components);
    // ClusterClass and managed topologies (alpha in v1.14, off by default); capi-clusterclass.test.ts needs them.
    capi = await startCapi(cp, tools, ['--sync-period=1m', '--feature-gates=ClusterTopology=true']);
    // banlieue's controller with the identity and RBAC the components gave it.
    controller = await startRole([
      'controller',
      '--kubeconfig',
      await serviceAccountKubeconfig(cp, 'banlieue-system', 'banlieue-controller'),
      '--no-leader-elect',
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  const clusterctlVersion = (
    await run(tools.clusterctl, ['version', '-o', 'short'], { env: { ...process.env, CLUSTERCTL_DISABLE_VERSIONCHECK: 'true', HOME: cp.dir } })
  ).stdout.trim();
  return {
    kubeconfig: cp.kubeconfigPath,
    versions: { capi: /Version: (v[0-9.]+)/.exec(readFileSync(capiLog, 'utf8'))?.[1] ?? 'unknown', clusterctl: clusterctlVersion },
    kubectl: (args, input) => cp.kubectl(args, input),
    capiLogs: () => readFileSync(capiLog, 'utf8'),
    clusterctl,
    startProvider: async (backend, extraArgs = []) => {
      const kubeconfig = await serviceAccountKubeconfig(cp, 'banlieue-system', `banlieue-provider-${backend}`);
      const role = await startRole(['provider', backend, '--kubeconfig', kubeconfig, '--no-leader-elect', ...extraArgs]);
      providers.push(role);
      return role;
    },
    stop,
  };
}

/** `make kind-e2e-capi`: the cluster (kind + clusterctl init) is provided by the Makefile; KUBECONFIG points at it. */
export async function kindEnvironment(): Promise<CapiEnvironment> {
  const kubeconfig = process.env.KUBECONFIG;
  if (!kubeconfig) throw new Error('kind e2e: KUBECONFIG must point at the kind cluster');
  const kubectl = async (args: string[], input?: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn('kubectl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err}`))));
      child.stdin.end(input ?? '');
    });
  const logs = async (): Promise<string> => kubectl(['logs', '-n', 'capi-system', 'deploy/capi-controller-manager', '--tail=-1']);
  let captured = await logs();
  const image = await kubectl(['get', 'deploy', '-n', 'capi-system', 'capi-controller-manager', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);
  const controller = await startRole(['controller', '--kubeconfig', kubeconfig, '--no-leader-elect']);
  const providers: RoleProcess[] = [];
  const refresh = setInterval(() => void logs().then((l) => (captured = l)), 2000);
  return {
    kubeconfig,
    versions: { capi: image.split(':').pop() ?? 'unknown', clusterctl: (await run('clusterctl', ['version', '-o', 'short'])).stdout.trim() },
    kubectl,
    capiLogs: () => captured,
    // The user's clusterctl and its configuration, where banlieue is registered.
    clusterctl: (args, env) => runClusterctl('clusterctl', args, env),
    startProvider: async (backend, extraArgs = []) => {
      const role = await startRole(['provider', backend, '--kubeconfig', kubeconfig, '--no-leader-elect', ...extraArgs]);
      providers.push(role);
      return role;
    },
    stop: async () => {
      clearInterval(refresh);
      for (const p of providers) await p.stop();
      await controller.stop();
    },
  };
}
