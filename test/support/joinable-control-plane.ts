// A control plane a real node can join, made joinable the way kubeadm makes
// one. etcd, kube-apiserver and kube-controller-manager run on loopback, as in
// control-plane.ts, with these differences:
//
// - One cluster CA. It signs the apiserver's serving certificate, which also
//   names the address guests dial. It is the apiserver's client CA, and
//   kube-controller-manager signs the kubelets' CSRs with it.
// - The apiserver authenticates bootstrap tokens and authorizes with
//   Node,RBAC. NodeRestriction admission is on.
// - kube-controller-manager runs bootstrapsigner (signs cluster-info for each
//   token), tokencleaner, csrapproving, csrsigning and csrcleaner.
//
// makeJoinable() then runs the real `kubeadm init phase upload-config
// kubeadm|kubelet`, `kubeadm init phase bootstrap-token` and `kubeadm token
// create`. They upload kubeadm-config and kubelet-config, create cluster-info
// in kube-public for anonymous discovery, and set up the bootstrap RBAC and
// CSR auto-approval. kubeadm runs where the guests' address reaches the API
// server, because bootstrap-token copies the server of its kubeconfig into
// cluster-info, and a joining node then talks to that server.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { appendFileSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, httpsGet, type KubeTools } from './control-plane.js';
import { createTestPki } from './test-pki.js';
import { waitFor } from './wait.js';

const LOOPBACK = '127.0.0.1';
/** The kubeadm defaults for Services and pods; the pod range is the node image's bridge CNI range. */
const SERVICE_SUBNET = '10.96.0.0/16';
const POD_SUBNET = '10.244.0.0/16';
const KUBERNETES_SERVICE_IP = '10.96.0.1';
/** containerd's socket on the node image (kubeadm would otherwise look for one here). */
const CRI_SOCKET = 'unix:///var/run/containerd/containerd.sock';

export interface JoinableControlPlaneOptions {
  /** The address guests reach the API server at (a forward to its loopback port), named by its serving certificate. */
  readonly guestAddress: string;
  /** The port guests dial at `guestAddress`. */
  readonly guestPort: number;
}

/** What `kubeadm token create --print-join-command` printed: the parts of `kubeadm join`. */
export interface JoinCommand {
  /** `<address>:<port>`, the discovery endpoint. */
  readonly endpoint: string;
  /** A bootstrap token, `<id>.<secret>`. */
  readonly token: string;
  /** `sha256:<hex>` of the cluster CA's public key. */
  readonly caCertHash: string;
}

/** Starts a process the way the guest network does (inside its namespaces). */
export type SpawnWhereGuestsDial = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export class JoinableControlPlane {
  readonly dir = mkdtempSync(join(tmpdir(), 'banlieue-joinable-cp-'));
  readonly adminToken = randomBytes(24).toString('hex');
  private readonly processes = new Map<string, ChildProcess>();
  /** https://127.0.0.1:<port>. */
  server = '';
  port = 0;
  caPem = '';
  /** Admin kubeconfig for this host (loopback). */
  kubeconfigPath = '';
  /** The same admin, for where guests dial (`guestAddress:guestPort`). */
  guestKubeconfigPath = '';

  private constructor(
    readonly tools: KubeTools,
    readonly options: JoinableControlPlaneOptions,
  ) {}

  static async start(tools: KubeTools, options: JoinableControlPlaneOptions): Promise<JoinableControlPlane> {
    const cp = new JoinableControlPlane(tools, options);
    try {
      const etcd = await cp.startEtcd();
      await cp.startApiserver(etcd);
      cp.startControllerManager();
    } catch (error) {
      await cp.stop();
      throw error;
    }
    return cp;
  }

  private spawnLogged(name: string, bin: string, args: string[]): void {
    const log = createWriteStream(join(this.dir, `${name}.log`), { flags: 'a' });
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.processes.set(name, child);
  }

  /** Last lines of a component's log (`kube-apiserver`, `kube-controller-manager`, `etcd`, `kubeadm`). */
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

  private async startEtcd(): Promise<string> {
    const [client, peer] = [await freePort(), await freePort()];
    const url = `http://${LOOPBACK}:${client}`;
    const peerUrl = `http://${LOOPBACK}:${peer}`;
    this.spawnLogged('etcd', this.tools.etcd, [
      `--data-dir=${join(this.dir, 'etcd')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=default=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await waitFor('etcd', async () => (await fetch(`${url}/health`)).ok || undefined, 30_000);
    return url;
  }

  private async startApiserver(etcdUrl: string): Promise<void> {
    this.port = await freePort();
    this.server = `https://${LOOPBACK}:${this.port}`;
    mkdirSync(join(this.dir, 'pki'));
    const pki = await createTestPki(join(this.dir, 'pki'), 'banlieue-workload-ca');
    this.caPem = pki.caPem;
    const serving = await pki.issueServer('apiserver', LOOPBACK, this.options.guestAddress, KUBERNETES_SERVICE_IP);
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(join(this.dir, 'sa.key'), privateKey.export({ type: 'pkcs1', format: 'pem' }));
    writeFileSync(join(this.dir, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(this.dir, 'tokens.csv'), `${this.adminToken},banlieue-test-admin,banlieue-test-admin,"system:masters"\n`);
    this.spawnLogged('kube-apiserver', this.tools.kubeApiserver, [
      `--etcd-servers=${etcdUrl}`,
      `--bind-address=${LOOPBACK}`,
      `--advertise-address=${LOOPBACK}`,
      '--endpoint-reconciler-type=none',
      `--secure-port=${this.port}`,
      `--tls-cert-file=${serving.certFile}`,
      `--tls-private-key-file=${serving.keyFile}`,
      // Client certificates: the kubelets', signed by kube-controller-manager with this CA.
      `--client-ca-file=${pki.caFile}`,
      `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
      // kubeadm's choices: bootstrap tokens, the Node authorizer and NodeRestriction.
      '--enable-bootstrap-token-auth=true',
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      `--service-account-issuer=${this.server}`,
      `--service-account-key-file=${join(this.dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(this.dir, 'sa.key')}`,
      `--service-cluster-ip-range=${SERVICE_SUBNET}`,
      '--allow-privileged=true',
      '--v=1',
    ]);
    try {
      await waitFor(
        'kube-apiserver /readyz',
        async () => (await httpsGet(`${this.server}/readyz`, this.caPem, this.adminToken)).status === 200 || undefined,
        120_000,
      );
    } catch (error) {
      throw new Error(`${String(error)}\n--- kube-apiserver log ---\n${this.logTail('kube-apiserver')}`);
    }
    this.kubeconfigPath = join(this.dir, 'admin.kubeconfig');
    writeFileSync(this.kubeconfigPath, this.kubeconfig(this.server));
    this.guestKubeconfigPath = join(this.dir, 'admin-guest.kubeconfig');
    writeFileSync(this.guestKubeconfigPath, this.kubeconfig(`https://${this.options.guestAddress}:${this.options.guestPort}`));
  }

  private startControllerManager(): void {
    this.spawnLogged('kube-controller-manager', this.tools.kubeControllerManager, [
      `--kubeconfig=${this.kubeconfigPath}`,
      `--authentication-kubeconfig=${this.kubeconfigPath}`,
      `--authorization-kubeconfig=${this.kubeconfigPath}`,
      // bootstrapsigner and tokencleaner are off unless named; the CSR controllers approve and sign kubelet certificates.
      '--controllers=bootstrapsigner,tokencleaner,csrapproving,csrsigning,csrcleaner',
      // The cluster CA (createTestPki's files).
      `--cluster-signing-cert-file=${join(this.dir, 'pki', 'ca.crt')}`,
      `--cluster-signing-key-file=${join(this.dir, 'pki', 'ca.key')}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--v=1',
    ]);
  }

  /** An admin kubeconfig (bearer token) for `server`, the CA inline (kubeadm copies the cluster into cluster-info). */
  private kubeconfig(server: string): string {
    return stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'workload', cluster: { server, 'certificate-authority-data': Buffer.from(this.caPem).toString('base64') } }],
      users: [{ name: 'admin', user: { token: this.adminToken } }],
      contexts: [{ name: 'admin', context: { cluster: 'workload', user: 'admin' } }],
      'current-context': 'admin',
    });
  }

  /** kubeadm's InitConfiguration and ClusterConfiguration for the phases: this control plane as the guests see it. */
  private writeKubeadmConfig(): string {
    const path = join(this.dir, 'kubeadm.yaml');
    const { guestAddress, guestPort } = this.options;
    const kubernetesVersion = this.tools.versions['kube-apiserver'];
    if (kubernetesVersion === undefined) throw new Error('the kube tools carry no kube-apiserver version');
    const init = {
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'InitConfiguration',
      // Set, so kubeadm looks for no default route (the namespace has none).
      localAPIEndpoint: { advertiseAddress: guestAddress, bindPort: guestPort },
      nodeRegistration: { name: 'control-plane', criSocket: CRI_SOCKET },
    };
    const cluster = {
      apiVersion: 'kubeadm.k8s.io/v1beta4',
      kind: 'ClusterConfiguration',
      clusterName: 'banlieue-workload',
      // Set, so kubeadm asks no release server for a version.
      kubernetesVersion,
      controlPlaneEndpoint: `${guestAddress}:${guestPort}`,
      // kubeadm's default, left as it is: the uploaded kubelet config names <certificatesDir>/ca.crt
      // as the kubelet's client CA, where `kubeadm join` writes the CA on the node.
      certificatesDir: '/etc/kubernetes/pki',
      networking: { serviceSubnet: SERVICE_SUBNET, podSubnet: POD_SUBNET, dnsDomain: 'cluster.local' },
    };
    writeFileSync(path, `${stringify(init)}---\n${stringify(cluster)}`);
    return path;
  }

  /**
   * Runs kubeadm's phases and `kubeadm token create --print-join-command` through `spawnInside`
   * (where the guests' address reaches this API server), and waits until bootstrapsigner has
   * signed cluster-info for the new token (what `kubeadm join` verifies).
   */
  async makeJoinable(kubeadm: string, spawnInside: SpawnWhereGuestsDial): Promise<JoinCommand> {
    const config = this.writeKubeadmConfig();
    const common = ['--config', config, '--kubeconfig', this.guestKubeconfigPath];
    for (const phase of [['upload-config', 'kubeadm'], ['upload-config', 'kubelet'], ['bootstrap-token']]) {
      await this.runKubeadm(kubeadm, spawnInside, ['init', 'phase', ...phase, ...common]);
    }
    const printed = await this.runKubeadm(kubeadm, spawnInside, ['token', 'create', '--print-join-command', ...common]);
    const match = /kubeadm join (\S+) --token (\S+)\s+--discovery-token-ca-cert-hash (\S+)/.exec(printed);
    if (!match?.[1] || !match[2] || !match[3]) throw new Error(`kubeadm token create printed no join command: ${printed}`);
    const join = { endpoint: match[1], token: match[2], caCertHash: match[3] };
    const tokenId = join.token.split('.')[0] ?? '';
    await waitFor(
      `cluster-info signed for token ${tokenId}`,
      async () => (await this.clusterInfo()).data?.[`jws-kubeconfig-${tokenId}`] !== undefined || undefined,
      60_000,
    );
    return join;
  }

  /** kube-public/cluster-info, read as anyone may (no credentials), as a joining node reads it. */
  async clusterInfo(): Promise<{ data?: Record<string, string> }> {
    const { status, body } = await httpsGet(`${this.server}/api/v1/namespaces/kube-public/configmaps/cluster-info`, this.caPem);
    if (status !== 200) return {};
    return JSON.parse(body) as { data?: Record<string, string> };
  }

  private runKubeadm(kubeadm: string, spawnInside: SpawnWhereGuestsDial, args: string[]): Promise<string> {
    const log = join(this.dir, 'kubeadm.log');
    appendFileSync(log, `$ kubeadm ${args.join(' ')}\n`);
    return new Promise((resolve, reject) => {
      const child = spawnInside(kubeadm, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', reject);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        appendFileSync(log, stdout + stderr);
        if (code === 0) resolve(stdout);
        else reject(new Error(`kubeadm ${args.slice(0, 4).join(' ')} exited ${code ?? signal}:\n${stderr || stdout}`));
      });
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

  /** kube-controller-manager, kube-apiserver, etcd (the order that stops each at once), then the directory unless kept. */
  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    for (const name of ['kube-controller-manager', 'kube-apiserver', 'etcd']) await this.stopProcess(name);
    if (!options.keepDir) rmSync(this.dir, { recursive: true, force: true });
  }
}
