// `banlieue host install`: what one Cloud Hypervisor host needs to run its
// provider, as files: the host config (state root, VMM binary, storage classes
// → directories, network classes → bridges), a systemd unit running
// `banlieue provider cloud-hypervisor` for its one Provider, the directories,
// and the RBAC of the host's own identity, scoped to that Provider (for a cluster
// admin to apply: the host holds no admin credential). --dry-run prints it all
// for review; otherwise it is written under --root (docs/cloud-hypervisor.md).
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { cloudHypervisorApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { HostRoleRules } from '../../infra/install/host-role-rules.js';
import { hostProviderRules } from '../../infra/install/rbac-rules.js';
import { HOST_CONFIG_ENV, parseHostConfig, type HostConfig } from '../backends/cloud-hypervisor/host-config.js';
import { CliError } from './cli-error.js';

export interface HostInstallOptions {
  /** The Provider this host serves, and its namespace. */
  readonly provider: string;
  readonly namespace: string;
  readonly hostName: string;
  readonly kubeconfig: string;
  readonly configPath: string;
  readonly stateRoot: string;
  readonly imageDir: string;
  readonly vmmBinary: string;
  readonly firmware?: string;
  readonly storageClasses: Readonly<Record<string, string>>;
  readonly networkClasses: Readonly<Record<string, string>>;
  readonly netns?: string;
  /** The banlieue executable the unit runs. */
  readonly banlieue: string;
}

export interface HostFile {
  readonly path: string;
  readonly mode: number;
  readonly content: string;
  /** What it is, for the printed review. */
  readonly about: string;
}

export interface HostInstall {
  readonly config: HostConfig;
  readonly files: readonly HostFile[];
  /** Directories to create (mode 0700 for the state root, 0755 else). */
  readonly directories: readonly { readonly path: string; readonly mode: number }[];
  /** What is left to a human: the token, applying the RBAC, the bridges. */
  readonly nextSteps: readonly string[];
}

const UNIT = 'banlieue-provider-cloud-hypervisor.service';
const BACKEND = cloudHypervisorApi.name;

/** Everything the host needs (pure); throws CliError for options that make no usable host config. */
export function renderHostInstall(options: HostInstallOptions): HostInstall {
  const document = {
    hostName: options.hostName,
    stateRoot: options.stateRoot,
    imageDir: options.imageDir,
    vmm: { binary: options.vmmBinary, ...(options.firmware ? { firmware: options.firmware } : {}) },
    storageClasses: { ...options.storageClasses },
    networkClasses: { ...options.networkClasses },
    ...(options.netns ? { netns: options.netns } : {}),
  };
  const configText = `# banlieue Cloud Hypervisor host config (docs/cloud-hypervisor.md); read when the provider starts.\n${stringify(document)}`;
  let config: HostConfig;
  try {
    config = parseHostConfig(configText, options.configPath);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const account = `banlieue-host-${config.hostName}`;
  const rbacPath = join(dirname(options.configPath), `rbac-${config.hostName}.yaml`);
  return {
    config,
    files: [
      { path: options.configPath, mode: 0o644, content: configText, about: 'host config' },
      { path: `/etc/systemd/system/${UNIT}`, mode: 0o644, content: systemdUnit(options, config), about: 'systemd unit of the provider' },
      { path: rbacPath, mode: 0o644, content: hostRbac(options, account), about: `RBAC of this host's identity (for a cluster admin: kubectl apply -f)` },
    ],
    directories: [
      { path: config.stateRoot, mode: 0o700 },
      { path: config.imageDir, mode: 0o755 },
      ...Object.values(config.storageClasses).map((path) => ({ path, mode: 0o700 })),
    ],
    nextSteps: [
      `a cluster admin applies ${rbacPath} (ServiceAccount ${options.namespace}/${account}, bound to the Provider ${options.provider} only)`,
      `write ${options.kubeconfig} for it, with a token from: kubectl -n ${options.namespace} create token ${account} --duration=8760h (renew it before it expires)`,
      ...Object.entries(config.networkClasses).map(
        ([cls, bridge]) =>
          `network class ${cls}: the bridge ${bridge} must exist${config.netns ? ` in network namespace ${config.netns}` : ''} (e.g. systemd-networkd or: ip link add ${bridge} type bridge)`,
      ),
      `put images in ${config.imageDir}; a VMImage source of this host is {providerClass: cloud-hypervisor, kind: BackingFile, ref: <file name>}`,
      `the Provider's spec.connection.endpoint is unix://${config.hostName}${config.stateRoot}`,
      `systemctl daemon-reload && systemctl enable --now ${UNIT}`,
    ],
  };
}

/** The review printed by --dry-run: every file with its path, the directories, what is left to do. */
export function describeHostInstall(install: HostInstall): string {
  const parts = install.files.map((f) => `# ----- ${f.path} (${f.about}, mode ${f.mode.toString(8)})\n${f.content.trimEnd()}\n`);
  parts.push(`# ----- directories\n${install.directories.map((d) => `install -d -m ${d.mode.toString(8)} ${d.path}`).join('\n')}\n`);
  parts.push(`# ----- then\n${install.nextSteps.map((s, i) => `# ${i + 1}. ${s}`).join('\n')}\n`);
  return parts.join('\n');
}

/** Writes the files and creates the directories under `root` (`/` on a real host). */
export async function writeHostInstall(install: HostInstall, root: string): Promise<string[]> {
  const written: string[] = [];
  for (const dir of install.directories) {
    await mkdir(join(root, dir.path), { recursive: true, mode: dir.mode });
    written.push(join(root, dir.path));
  }
  for (const file of install.files) {
    const path = join(root, file.path);
    await mkdir(dirname(path), { recursive: true, mode: 0o755 });
    await writeFile(path, file.content, { mode: file.mode });
    await chmod(path, file.mode);
    written.push(path);
  }
  return written;
}

function systemdUnit(options: HostInstallOptions, config: HostConfig): string {
  const args = [
    options.banlieue,
    'provider',
    BACKEND,
    `--kubeconfig=${options.kubeconfig}`,
    // Only its Provider's namespace: the RBAC below grants nothing elsewhere.
    `--namespace=${options.namespace}`,
    // Only its Provider, its image rows and the machines placed on it: hosts share a namespace (ADR 17).
    `--provider=${options.provider}`,
    // One Lease per host: hosts do not fence each other, two processes on one host do.
    `--leader-election-namespace=${options.namespace}`,
    `--leader-election-id=banlieue-provider-${BACKEND}-${config.hostName}`,
    `--leader-election-identity=${config.hostName}`,
    '--bind-address=127.0.0.1',
  ];
  return [
    '[Unit]',
    `Description=banlieue Cloud Hypervisor provider for Provider ${options.namespace}/${options.provider}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    `Environment=${HOST_CONFIG_ENV}=${options.configPath}`,
    `ExecStart=${args.join(' ')}`,
    'Restart=always',
    'RestartSec=5',
    // The VMMs run detached in the unit's cgroup: only the provider is stopped or
    // restarted with the unit, never the VMs (the default, control-group, would kill them).
    'KillMode=process',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

function hostRbac(options: HostInstallOptions, account: string): string {
  const { namespace, provider } = options;
  const names = HostRoleRules.namesOf(BACKEND);
  const labels = { 'app.kubernetes.io/name': 'banlieue', 'app.kubernetes.io/component': `provider-${BACKEND}`, 'banlieue.io/host': options.hostName };
  const subject = [{ kind: 'ServiceAccount', name: account, namespace }];
  const rbac = 'rbac.authorization.k8s.io/v1';
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace, labels } },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: account, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.namespaced },
      subjects: subject,
    },
    { apiVersion: rbac, kind: 'Role', metadata: { name: `${account}-provider`, namespace, labels }, rules: hostProviderRules(BACKEND).ownProvider(provider) },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: `${account}-provider`, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${account}-provider` },
      subjects: subject,
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: `${account}-${namespace}`, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: names.cluster },
      subjects: subject,
    },
  ];
  return objects.map((o) => stringify(o)).join('---\n');
}
