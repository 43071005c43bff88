// A real Kubernetes control plane for tests and `make dev-cluster`: etcd,
// kube-apiserver (RBAC, bearer-token and ServiceAccount auth, audit log) and
// kube-controller-manager (garbage collection, namespace deletion), all on
// loopback ports picked at start, all stopped by stop(). No fake API server.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createTestPki } from './test-pki.js';
import { waitFor } from './wait.js';

const LOOPBACK = '127.0.0.1';

/** What a control plane runs: etcd, kube-apiserver, kube-controller-manager, and kubectl to talk to it. */
export interface KubeTools {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubectl: string;
  versions: Record<string, string>;
}

export interface Tools extends KubeTools {
  /** The Cluster API core manager, clusterctl and the module they came from (CRDs, RBAC). */
  capiManager: string;
  clusterctl: string;
  capiModuleDir: string;
}

/** The wrapper modules of test/tools/build.sh. */
type ToolModule = 'etcd' | 'kube' | 'capi' | 'govmomi' | 'cabpk' | 'node' | 'capv';

/**
 * Run test/tools/build.sh for `modules` (every tool when none): the path and
 * version of each tool it reports. Its progress goes to our stderr when
 * `showProgress` (a cold build takes many minutes), else is kept for errors.
 */
async function runToolsBuild(
  modules: readonly ToolModule[],
  showProgress: boolean,
): Promise<{ need: (name: string) => string; versions: Record<string, string> }> {
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn('test/tools/build.sh', [...modules], { stdio: ['ignore', 'pipe', showProgress ? 'inherit' : 'pipe'] });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0 ? resolve(out) : reject(new Error(`test/tools/build.sh ${modules.join(' ')} exited ${code ?? signal}\n${err}`)),
    );
  });
  const paths: Record<string, string> = {};
  const versions: Record<string, string> = {};
  for (const line of stdout.trim().split('\n')) {
    const [name, version, path] = line.split(' ');
    if (name && version && path) {
      paths[name] = path;
      versions[name] = version;
    }
  }
  const need = (name: string): string => {
    const p = paths[name];
    if (!p) throw new Error(`test/tools/build.sh did not report ${name}`);
    return p;
  };
  return { need, versions };
}

/** Build (or find cached) the tools with test/tools/build.sh and return their paths. */
export async function buildTools(): Promise<Tools> {
  const { need, versions } = await runToolsBuild([], false);
  return {
    etcd: need('etcd'),
    kubeApiserver: need('kube-apiserver'),
    kubeControllerManager: need('kube-controller-manager'),
    kubectl: need('kubectl'),
    capiManager: need('capi-manager'),
    clusterctl: need('clusterctl'),
    capiModuleDir: need('capi-module'),
    versions,
  };
}

/**
 * CAPV's manager and its module (CRDs in config/default/crd/bases, RBAC in config/rbac); a cold
 * build takes minutes, its progress goes to our stderr.
 */
export async function buildCapv(): Promise<{ manager: string; moduleDir: string; version: string }> {
  const { need, versions } = await runToolsBuild(['capv'], true);
  return { manager: need('capv-manager'), moduleDir: need('capv-module'), version: versions['capv-manager'] ?? 'unknown' };
}

/** The kubeadm bootstrap provider's manager (CABPK), of the CAPI module the manager comes from. */
export async function buildCabpk(): Promise<string> {
  return (await runToolsBuild(['cabpk'], false)).need('cabpk');
}

/** The kubeadm of the node image (test/tools/node-image.sh), for the kubeadm phases run against a test control plane. */
export async function buildNodeKubeadm(): Promise<string> {
  return (await runToolsBuild(['node'], false)).need('kubeadm');
}

/** Only what a control plane needs (no Cluster API): `make demo` on a fresh machine builds no more. */
export async function buildKubeTools(options: { showProgress?: boolean } = {}): Promise<KubeTools> {
  const { need, versions } = await runToolsBuild(['etcd', 'kube'], options.showProgress ?? false);
  return {
    etcd: need('etcd'),
    kubeApiserver: need('kube-apiserver'),
    kubeControllerManager: need('kube-controller-manager'),
    kubectl: need('kubectl'),
    versions,
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** GET `url` with a bearer token (none: anonymously), verifying the server against `ca`. */
export function httpsGet(url: string, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = token === undefined ? {} : { authorization: `Bearer ${token}` };
    const req = request(url, { ca, headers, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager (GC, namespace deletion). @default true */
  readonly controllerManager?: boolean;
  /** Where to keep data and logs; a fresh temp dir by default. */
  readonly dir?: string;
  /**
   * More bearer-token users in system:masters, each with a kubeconfig (kubeconfigOf):
   * processes that run as one of them are told apart in the audit log by user.
   * @default none
   */
  readonly users?: readonly string[];
  /**
   * More kube-controller-manager controllers, e.g. `['deployment', 'replicaset']` so that
   * Deployments get ReplicaSets and pods (which stay Pending: no node, no scheduler).
   * @default none
   */
  readonly controllers?: readonly string[];
  /** Audit level of writes: Request also logs each write's body (requestObject). @default 'Metadata' */
  readonly auditLevel?: 'Metadata' | 'Request';
  /**
   * Joinable by real nodes, as kubeadm makes a control plane (joinable-control-plane.ts): one CA
   * of its own signs the serving certificate (which names `guestAddress` and the kubernetes
   * Service's address too), is the client CA and signs the kubelets' CSRs; bootstrap-token
   * authentication, the Node authorizer and NodeRestriction; kube-controller-manager also runs
   * bootstrapsigner, tokencleaner, the CSR controllers and nodelifecycle. @default not joinable
   */
  readonly joinable?: { readonly guestAddress: string; readonly serviceSubnet: string; readonly kubernetesServiceIp: string };
}

export class ControlPlane {
  readonly dir: string;
  readonly adminToken = randomBytes(24).toString('hex');
  private readonly processes = new Map<string, ChildProcess>();
  private apiserverArgs: string[] = [];
  private readonly userKubeconfigs = new Map<string, string>();
  server = '';
  port = 0;
  caCert = '';
  /** The serving certificate (leaf and CA) the apiserver writes into its cert dir. */
  private certFile = '';
  kubeconfigPath = '';
  auditLogPath = '';

  private constructor(
    readonly tools: KubeTools,
    private readonly options: ControlPlaneOptions,
  ) {
    this.dir = options.dir ?? mkdtempSync(join(tmpdir(), 'banlieue-cp-'));
  }

  static async start(tools: KubeTools, options: ControlPlaneOptions = {}): Promise<ControlPlane> {
    const cp = new ControlPlane(tools, options);
    try {
      await cp.startEtcd();
      await cp.startApiserver();
      if (options.controllerManager ?? true) await cp.startControllerManager();
    } catch (err) {
      await cp.stop();
      throw err;
    }
    return cp;
  }

  private spawnLogged(name: string, bin: string, args: string[]): ChildProcess {
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.processes.set(name, child);
    return child;
  }

  /** The process of `name` (etcd, kube-apiserver, kube-controller-manager) as it runs now, -1 when it does not. */
  pidOf(name: string): number {
    return this.processes.get(name)?.pid ?? -1;
  }

  /** Last lines of a component's log, for failure messages. */
  logTail(name: string, lines = 30): string {
    try {
      return readFileSync(join(this.dir, `${name}.log`), 'utf8')
        .split('\n')
        .slice(-lines)
        .join('\n');
    } catch {
      return '';
    }
  }

  private etcdUrl = '';

  private async startEtcd(): Promise<void> {
    const [client, peer] = [await freePort(), await freePort()];
    this.etcdUrl = `http://${LOOPBACK}:${client}`;
    const peerUrl = `http://${LOOPBACK}:${peer}`;
    this.spawnLogged('etcd', this.tools.etcd, [
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=${this.etcdUrl}`,
      `--advertise-client-urls=${this.etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      // Test data is disposable; fsync dominates etcd latency on small disks.
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await waitFor('etcd', async () => (await fetch(`${this.etcdUrl}/health`)).ok || undefined, 30_000);
  }

  private async startApiserver(): Promise<void> {
    const port = await freePort();
    this.port = port;
    this.server = `https://${LOOPBACK}:${port}`;
    const certDir = join(this.dir, 'pki');
    const tls = await this.servingFlags(certDir);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(this.dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
    writeFileSync(join(this.dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    const users = new Map((this.options.users ?? []).map((user) => [user, randomBytes(24).toString('hex')]));
    const tokenLines = [['banlieue-test-admin', this.adminToken], ...users.entries()].map(([user, token]) => `${token},${user},${user},"system:masters"\n`);
    writeFileSync(join(this.dir, 'tokens.csv'), tokenLines.join(''));
    this.auditLogPath = join(this.dir, 'audit.log');
    // Only writes are audited: tests count them to prove a quiet steady state.
    writeFileSync(
      join(this.dir, 'audit-policy.yaml'),
      stringify({
        apiVersion: 'audit.k8s.io/v1',
        kind: 'Policy',
        omitStages: ['RequestReceived'],
        rules: [{ level: this.options.auditLevel ?? 'Metadata', verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }, { level: 'None' }],
      }),
    );
    this.apiserverArgs = [
      `--etcd-servers=${this.etcdUrl}`,
      `--bind-address=${LOOPBACK}`,
      `--advertise-address=${LOOPBACK}`,
      // Endpoints refuse loopback addresses; nothing in-cluster dials the
      // kubernetes Service here, so do not maintain it.
      '--endpoint-reconciler-type=none',
      `--secure-port=${port}`,
      ...tls.flags,
      `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
      `--service-account-issuer=${this.server}`,
      `--service-account-key-file=${join(this.dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
      `--service-cluster-ip-range=${this.options.joinable?.serviceSubnet ?? '10.0.0.0/24'}`,
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      `--audit-policy-file=${join(this.dir, 'audit-policy.yaml')}`,
      `--audit-log-path=${this.auditLogPath}`,
      '--audit-log-mode=blocking',
      '--v=1',
    ];
    this.spawnApiserver();
    this.certFile = tls.caFile;
    await this.waitApiserverReady();
    this.kubeconfigPath = join(this.dir, 'kubeconfig');
    writeFileSync(this.kubeconfigPath, this.kubeconfig('banlieue-test-admin', this.adminToken));
    for (const [user, token] of users) {
      const path = join(this.dir, `kubeconfig-${user}`);
      writeFileSync(path, this.kubeconfig(user, token));
      this.userKubeconfigs.set(user, path);
    }
  }

  /** The apiserver's TLS and authentication flags, and the file its clients verify it with. */
  private async servingFlags(certDir: string): Promise<{ flags: string[]; caFile: string }> {
    const joinable = this.options.joinable;
    if (!joinable) {
      // Without --tls-cert-file the apiserver writes a self-signed serving
      // certificate for 127.0.0.1/localhost here; clients verify against it.
      return { flags: [`--cert-dir=${certDir}`, '--authorization-mode=RBAC'], caFile: join(certDir, 'apiserver.crt') };
    }
    mkdirSync(certDir);
    const pki = await createTestPki(certDir, 'banlieue-workload-ca');
    const serving = await pki.issueServer('apiserver', LOOPBACK, joinable.guestAddress, joinable.kubernetesServiceIp);
    return {
      flags: [
        `--tls-cert-file=${serving.certFile}`,
        `--tls-private-key-file=${serving.keyFile}`,
        // Client certificates: the kubelets', signed by kube-controller-manager with this CA.
        `--client-ca-file=${pki.caFile}`,
        // kubeadm's choices: bootstrap tokens, the Node authorizer and NodeRestriction.
        '--enable-bootstrap-token-auth=true',
        '--authorization-mode=Node,RBAC',
        '--enable-admission-plugins=NodeRestriction',
      ],
      caFile: pki.caFile,
    };
  }

  /** The kubeconfig of one of `ControlPlaneOptions.users`. */
  kubeconfigOf(user: string): string {
    const path = this.userKubeconfigs.get(user);
    if (!path) throw new Error(`no user ${user} in this control plane (ControlPlaneOptions.users)`);
    return path;
  }

  private spawnApiserver(): void {
    this.spawnLogged('kube-apiserver', this.tools.kubeApiserver, this.apiserverArgs);
  }

  /**
   * Until /readyz answers 200, verified against the serving certificate the apiserver wrote. Read
   * again at every probe: the file appears before it is whole (leaf, then its CA), and a copy read
   * half-written fails every later probe on a busy machine.
   */
  private async waitApiserverReady(): Promise<void> {
    try {
      await waitFor(
        'kube-apiserver /readyz',
        async () => {
          const caCert = readFileSync(this.certFile, 'utf8');
          if ((await httpsGet(`${this.server}/readyz`, caCert, this.adminToken)).status !== 200) return undefined;
          this.caCert = caCert;
          return true;
        },
        120_000,
      );
    } catch (err) {
      throw new Error(`${String(err)}\n--- kube-apiserver log ---\n${this.logTail('kube-apiserver')}`);
    }
  }

  /** Stop kube-apiserver and start it again on the same port and data (robustness tests), after `downForMs` (an outage). */
  async restartApiserver(downForMs = 0): Promise<void> {
    await this.stopProcess('kube-apiserver');
    if (downForMs > 0) await new Promise((resolve) => setTimeout(resolve, downForMs));
    this.spawnApiserver();
    await this.waitApiserverReady();
  }

  private async startControllerManager(): Promise<void> {
    this.spawnLogged('kube-controller-manager', this.tools.kubeControllerManager, [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      // GC, namespace deletion, and ClusterRole aggregation (CAPI's manager role).
      ...(this.options.joinable
        ? [
            // bootstrapsigner and tokencleaner are off unless named; the CSR controllers approve and sign kubelet certificates;
            // nodelifecycle marks a Node whose kubelet stopped posting Ready=Unknown (what a MachineHealthCheck reads).
            '--controllers=garbagecollector,namespace,clusterrole-aggregation,bootstrapsigner,tokencleaner,csrapproving,csrsigning,csrcleaner,nodelifecycle',
            `--cluster-signing-cert-file=${join(this.dir, 'pki', 'ca.crt')}`,
            `--cluster-signing-key-file=${join(this.dir, 'pki', 'ca.key')}`,
          ]
        : ['--controllers=garbagecollector,namespace,clusterrole-aggregation']),
      // A repeated --controllers adds to the list.
      ...(this.options.controllers ? [`--controllers=${this.options.controllers.join(',')}`] : []),
      '--leader-elect=false',
      // No serving port: nothing scrapes it in tests.
      '--secure-port=0',
      '--v=1',
    ]);
  }

  /** A kubeconfig for a bearer token, verifying the apiserver certificate; for `server` when it is reached elsewhere. */
  kubeconfig(user: string, token: string, server = this.server): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'banlieue-test', cluster: { server, 'certificate-authority-data': Buffer.from(this.caCert).toString('base64') } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: user, context: { cluster: 'banlieue-test', user } }],
      'current-context': user,
    });
  }

  /** Run kubectl as the admin; resolves with stdout, rejects with stderr. */
  async kubectl(args: string[], input?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.tools.kubectl, [`--kubeconfig=${this.kubeconfigPath}`, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err || out}`))));
      // kubectl may exit before reading its input (a refused flag): that is its
      // exit code's story, not an EPIPE that takes this process down.
      child.stdin.on('error', () => undefined);
      child.stdin.end(input ?? '');
    });
  }

  private async stopProcess(name: string): Promise<void> {
    const child = this.processes.get(name);
    this.processes.delete(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    for (const name of ['kube-controller-manager', 'kube-apiserver', 'etcd']) await this.stopProcess(name);
    if (!options.keepDir && !this.options.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
