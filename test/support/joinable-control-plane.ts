// A control plane a real node can join, made joinable the way kubeadm makes
// one: control-plane.ts's, started `joinable` (one cluster CA for serving,
// clients and kubelet CSRs; bootstrap tokens, Node,RBAC, NodeRestriction;
// bootstrapsigner, tokencleaner and the CSR controllers).
//
// makeJoinable() then runs the real `kubeadm init phase upload-config
// kubeadm|kubelet`, `kubeadm init phase bootstrap-token` and `kubeadm token
// create`. They upload kubeadm-config and kubelet-config, create cluster-info
// in kube-public for anonymous discovery, and set up the bootstrap RBAC and
// CSR auto-approval. kubeadm runs where the guests' address reaches the API
// server, because bootstrap-token copies the server of its kubeconfig into
// cluster-info, and a joining node then talks to that server.
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { ControlPlane, httpsGet, type KubeTools } from './control-plane.js';
import { waitFor } from './wait.js';

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
  /** Admin kubeconfig for where guests dial (`guestAddress:guestPort`). */
  readonly guestKubeconfigPath: string;

  private constructor(
    private readonly plane: ControlPlane,
    readonly tools: KubeTools,
    readonly options: JoinableControlPlaneOptions,
  ) {
    this.guestKubeconfigPath = join(plane.dir, 'admin-guest.kubeconfig');
    writeFileSync(this.guestKubeconfigPath, plane.kubeconfig('banlieue-test-admin', plane.adminToken, `https://${options.guestAddress}:${options.guestPort}`));
  }

  static async start(tools: KubeTools, options: JoinableControlPlaneOptions): Promise<JoinableControlPlane> {
    const plane = await ControlPlane.start(tools, {
      joinable: { guestAddress: options.guestAddress, serviceSubnet: SERVICE_SUBNET, kubernetesServiceIp: KUBERNETES_SERVICE_IP },
    });
    return new JoinableControlPlane(plane, tools, options);
  }

  get dir(): string {
    return this.plane.dir;
  }

  /** https://127.0.0.1:<port>. */
  get server(): string {
    return this.plane.server;
  }

  get port(): number {
    return this.plane.port;
  }

  /** The cluster CA. */
  get caPem(): string {
    return this.plane.caCert;
  }

  /** Admin kubeconfig for this host (loopback). */
  get kubeconfigPath(): string {
    return this.plane.kubeconfigPath;
  }

  /** Last lines of a component's log (`kube-apiserver`, `kube-controller-manager`, `etcd`, `kubeadm`). */
  logTail(name: string, lines = 30): string {
    return this.plane.logTail(name, lines);
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

  async stop(options: { keepDir?: boolean } = {}): Promise<void> {
    await this.plane.stop(options);
  }
}
