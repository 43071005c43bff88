// CAPV's manager (cluster-api-provider-vsphere, govmomi mode) as a process on
// loopback against a test control plane, for the side-by-side bench: its CRDs
// from its module as its release labels them, its manager role aggregated to
// CAPI's manager (as its release does, so CAPI may read and own its objects),
// and vCenter credentials in its credentials file. It runs as its own
// system:masters user (its own RBAC is not the point here) and serves its
// webhooks, which are not registered: the objects the bench writes are complete.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { createWebhookEndpoint } from '../contract/capi-webhooks.js';
import { freePort, type ControlPlane } from '../support/control-plane.js';
import { waitFor } from '../support/wait.js';

/** CAPV's infrastructure group (banlieue's kinds of the same names are in infrastructure.banlieue.io). */
export const CAPV_GROUP = 'infrastructure.cluster.x-k8s.io';

export interface CapvManager {
  readonly child: ChildProcess;
  /** Everything it logged so far. */
  logs(): string;
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

function readYaml(path: string): Json[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as Json | null)
    .filter((d): d is Json => d !== null);
}

/** CAPV's govmomi-mode CRDs with the labels its kustomization adds (CAPI picks the served contract version by them), and its manager role aggregated to CAPI's. */
export async function installCapv(cp: ControlPlane, moduleDir: string): Promise<void> {
  const bases = join(moduleDir, 'config/default/crd/bases');
  const labels = { 'cluster.x-k8s.io/provider': 'infrastructure-vsphere', 'cluster.x-k8s.io/v1beta1': 'v1beta1', 'cluster.x-k8s.io/v1beta2': 'v1beta2' };
  const crds = readdirSync(bases)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => readYaml(join(bases, f)))
    .map((crd) => ({ ...crd, metadata: { ...(crd.metadata as Json), labels } }));
  await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-bench', '-f', '-'], crds.map((d) => stringify(d)).join('---\n'));
  const [role] = readYaml(join(moduleDir, 'config/rbac/role.yaml'));
  if (!role) throw new Error(`${moduleDir}/config/rbac/role.yaml has no ClusterRole`);
  const aggregated = { ...role, metadata: { name: 'capv-manager-role', labels: { 'cluster.x-k8s.io/aggregate-to-manager': 'true' } } };
  await cp.kubectl(['apply', '--server-side', '--field-manager=banlieue-bench', '-f', '-'], stringify(aggregated));
  await cp.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '-l', 'cluster.x-k8s.io/provider=infrastructure-vsphere']);
}

export interface CapvManagerOptions {
  readonly binary: string;
  readonly kubeconfig: string;
  /** The one namespace it watches. */
  readonly namespace: string;
  readonly vcenter: { readonly username: string; readonly password: string };
  /** Where its credentials file, webhook certificates and log go. */
  readonly dir: string;
}

/** CAPV's manager, with its defaults otherwise (concurrency 10 per kind, sync period 10 min), once its /readyz answers. */
export async function startCapvManager(options: CapvManagerOptions): Promise<CapvManager> {
  mkdirSync(options.dir, { recursive: true });
  const credentials = join(options.dir, 'credentials.yaml');
  writeFileSync(credentials, stringify({ username: options.vcenter.username, password: options.vcenter.password }), { mode: 0o600 });
  const ports = { webhook: await freePort(), health: await freePort() };
  const webhook = await createWebhookEndpoint(options.dir, ports.webhook);
  const child = spawn(options.binary, [
    `--kubeconfig=${options.kubeconfig}`,
    '--leader-elect=false',
    `--namespace=${options.namespace}`,
    `--credentials-file=${credentials}`,
    `--webhook-port=${ports.webhook}`,
    `--webhook-cert-dir=${webhook.certDir}`,
    `--health-addr=127.0.0.1:${ports.health}`,
    '--diagnostics-address=0',
    '--profiler-address=',
  ]);
  const logPath = join(options.dir, 'capv-manager.log');
  const log = createWriteStream(logPath);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const logs = (): string => readFileSync(logPath, 'utf8');
  await waitFor(
    "CAPV's manager to be ready",
    async () => {
      if (child.exitCode !== null) throw new Error(`CAPV's manager exited:\n${logs().slice(-3000)}`);
      const res = await fetch(`http://127.0.0.1:${ports.health}/readyz`).catch(() => undefined);
      return res?.ok;
    },
    120_000,
  ).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    child,
    logs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
