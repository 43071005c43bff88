// `banlieue host install`: what one Cloud Hypervisor host needs to run its
// provider, as files: the host config (state root, VMM binary, storage classes
// → directories, network classes → bridges), a systemd unit running
// `banlieue provider cloud-hypervisor` for its one Provider as an unprivileged,
// sandboxed user (the sysusers.d entry makes it, the tmpfiles.d entry gives it
// its directories), and the RBAC of the host's own identity, scoped to that
// Provider (for a cluster admin to apply: the host holds no admin credential).
// --dry-run prints it all for review; otherwise it is written under --root
// (docs/cloud-hypervisor.md says what the VMM needs and why).
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { cloudHypervisorApi } from '../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { HostRoleRules } from '../../infra/install/host-role-rules.js';
import { hostProviderRules, hostReadsRoleName } from '../../infra/install/rbac-rules.js';
import { roleRuntimeEnv } from '../../infra/install/role-runtime.js';
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
/** The system user (and group) the provider and its VMMs run as. */
const SERVICE_USER = 'banlieue';
const SYSUSERS = `/etc/sysusers.d/banlieue-${BACKEND}.conf`;
const TMPFILES = `/etc/tmpfiles.d/banlieue-${BACKEND}.conf`;
// ProtectHome= makes these empty for the unit: no host path may be under them.
const HIDDEN_ROOTS = ['/home', '/root', '/run/user'];
// Unit files read whitespace, quotes, backslashes and % specially: host paths stay plain.
const UNIT_PATH = /^\/[A-Za-z0-9._+:@/-]*$/;
// ExecStart= also takes a bare command name, which systemd looks up in its own search path.
const UNIT_COMMAND = /^[A-Za-z0-9._+:@-]+$/;

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
    // The host's Url image policy, written out so the admin sees it (the lab opt-ins are off).
    urlImages: { maxSizeMiB: 20 * 1024, allowHttp: false, allowWithoutChecksum: false },
  };
  const configText = `# banlieue Cloud Hypervisor host config (docs/cloud-hypervisor.md); read when the provider starts.\n${stringify(document)}`;
  let config: HostConfig;
  try {
    config = parseHostConfig(configText, options.configPath);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  checkUnitPaths(options, config);
  const account = `banlieue-host-${config.hostName}`;
  const rbacPath = join(dirname(options.configPath), `rbac-${config.hostName}.yaml`);
  return {
    config,
    files: [
      { path: options.configPath, mode: 0o644, content: configText, about: 'host config' },
      { path: `/etc/systemd/system/${UNIT}`, mode: 0o644, content: systemdUnit(options, config), about: 'systemd unit of the provider' },
      { path: SYSUSERS, mode: 0o644, content: sysusers(config), about: `the system user ${SERVICE_USER} the unit runs as (systemd-sysusers)` },
      { path: TMPFILES, mode: 0o644, content: tmpfiles(config), about: `the host's directories, owned by ${SERVICE_USER} (systemd-tmpfiles)` },
      { path: rbacPath, mode: 0o644, content: hostRbac(options, account), about: `RBAC of this host's identity (for a cluster admin: kubectl apply -f)` },
    ],
    directories: [
      { path: config.stateRoot, mode: 0o700 },
      { path: config.imageDir, mode: 0o755 },
      ...Object.values(config.storageClasses).map((path) => ({ path, mode: 0o700 })),
    ],
    nextSteps: [
      `systemd-sysusers ${SYSUSERS} && systemd-tmpfiles --create ${TMPFILES} (the user ${SERVICE_USER}, in group kvm, and its directories)`,
      `a cluster admin applies ${rbacPath} (ServiceAccount ${options.namespace}/${account}, bound to the Provider ${options.provider} only)`,
      `write ${options.kubeconfig} for it, with a token from: kubectl -n ${options.namespace} create token ${account} --duration=8760h (renew it before it expires); owner root, group ${SERVICE_USER}, mode 0640`,
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

/** Throws CliError for a host path the sandboxed unit could not use, or could not name. */
function checkUnitPaths(options: HostInstallOptions, config: HostConfig): void {
  const paths = [
    config.stateRoot,
    config.imageDir,
    config.vmm.binary,
    ...(config.vmm.firmware ? [config.vmm.firmware] : []),
    ...Object.values(config.storageClasses),
    options.kubeconfig,
    options.configPath,
    ...(UNIT_COMMAND.test(options.banlieue) ? [] : [options.banlieue]),
  ];
  for (const path of paths) {
    if (!UNIT_PATH.test(path)) throw new CliError(`${JSON.stringify(path)} cannot be written in a systemd unit: use a path of letters, digits and ._+:@/-`);
    const under = HIDDEN_ROOTS.find((root) => path === root || path.startsWith(`${root}/`));
    if (under) throw new CliError(`${path} is under ${under}, which the unit cannot see (ProtectHome=): put it elsewhere`);
  }
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
    // Node's settings as the Deployments give a role (role-runtime.ts); no MemoryMax=, whose cgroup holds the VMMs too.
    ...Object.entries(roleRuntimeEnv()).map(([name, value]) => `Environment="${name}=${value}"`),
    `ExecStart=${args.join(' ')}`,
    'Restart=always',
    'RestartSec=5',
    // The VMMs run detached in the unit's cgroup: only the provider is stopped or
    // restarted with the unit, never the VMs (the default, control-group, would kill them).
    'KillMode=process',
    ...sandbox(config),
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/**
 * The unit's user and sandbox, which its VMMs inherit (they are its children, in its cgroup).
 * What each line is for is in docs/cloud-hypervisor.md ("What the host unit may do").
 */
function sandbox(config: HostConfig): string[] {
  // ip -n and ip netns exec enter the guests' network namespace: setns and a mount namespace.
  const capabilities = config.netns ? 'CAP_NET_ADMIN CAP_SYS_ADMIN' : 'CAP_NET_ADMIN';
  const writable = [config.stateRoot, config.imageDir, ...new Set(Object.values(config.storageClasses))];
  return [
    `User=${SERVICE_USER}`,
    `Group=${SERVICE_USER}`,
    'SupplementaryGroups=kvm',
    'NoNewPrivileges=yes',
    `CapabilityBoundingSet=${capabilities}`,
    `AmbientCapabilities=${capabilities}`,
    'ProtectSystem=strict',
    ...writable.map((path) => `ReadWritePaths=${path}`),
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'DevicePolicy=closed',
    'DeviceAllow=/dev/kvm rw',
    'DeviceAllow=/dev/net/tun rw',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'ProtectProc=invisible',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    `RestrictNamespaces=${config.netns ? 'mnt net' : 'yes'}`,
    'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes',
    'LockPersonality=yes',
    'SystemCallArchitectures=native',
    `SystemCallFilter=~@clock @cpu-emulation @debug @module${config.netns ? '' : ' @mount'} @obsolete @raw-io @reboot @swap`,
    'SystemCallErrorNumber=EPERM',
    'UMask=0077',
  ];
}

function sysusers(config: HostConfig): string {
  return [
    `# The user banlieue's Cloud Hypervisor provider and its VMMs run as; in group kvm for /dev/kvm.`,
    `u ${SERVICE_USER} - "banlieue Cloud Hypervisor provider" ${config.stateRoot}`,
    `m ${SERVICE_USER} kvm`,
    '',
  ].join('\n');
}

function tmpfiles(config: HostConfig): string {
  const owned = (path: string, mode: string): string => `d ${path} ${mode} ${SERVICE_USER} ${SERVICE_USER} -`;
  return [
    `# The directories of banlieue's Cloud Hypervisor provider, its user's (the unit can write nothing else).`,
    owned(config.stateRoot, '0700'),
    owned(config.imageDir, '0755'),
    ...[...new Set(Object.values(config.storageClasses))].map((path) => owned(path, '0700')),
    '',
  ].join('\n');
}

function hostRbac(options: HostInstallOptions, account: string): string {
  const { namespace, provider } = options;
  const names = HostRoleRules.namesOf(BACKEND);
  const labels = { 'app.kubernetes.io/name': 'banlieue', 'app.kubernetes.io/component': `provider-${BACKEND}`, 'banlieue.io/host': options.hostName };
  const subject = [{ kind: 'ServiceAccount', name: account, namespace }];
  const rbac = 'rbac.authorization.k8s.io/v1';
  const reads = hostReadsRoleName(BACKEND);
  const { 'banlieue.io/host': _oneHost, ...readsLabels } = labels;
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
    // The Secrets this namespace's hosts may read, listed by banlieue's controller (ADR 29): made
    // here without rules, so that applying another host's RBAC leaves the controller's list alone.
    { apiVersion: rbac, kind: 'Role', metadata: { name: reads, namespace, labels: readsLabels } },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: `${account}-reads`, namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: reads },
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
