// `banlieue host install`: the host config the provider reads, a unit that leaves VMMs running, RBAC scoped to one Provider.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { describeHostInstall, renderHostInstall } from '../../../../controller/cli/host-install.js';
import { parseHostConfig } from '../../../../controller/backends/cloud-hypervisor/host-config.js';
import { roleRuntimeEnv } from '../../../../infra/install/role-runtime.js';
import { HOST_INSTALL_OPTIONS } from '../../../support/cloud-hypervisor/host-install-options.js';

const options = HOST_INSTALL_OPTIONS;
const fileNamed = (suffix: string): string => renderHostInstall(options).files.find((f) => f.path.endsWith(suffix))?.content ?? '';

describe('banlieue host install', () => {
  it('writes a host config the provider parses back', () => {
    const config = parseHostConfig(fileNamed('cloud-hypervisor.yaml'), 'x');
    expect(config).toMatchObject({ hostName: 'kvm1', storageClasses: { fast: '/srv/vm/fast' }, networkClasses: { lan: 'br0' } });
  });

  it('runs the provider for its own Provider only, with a Lease of its own, and stops only the provider with the unit', () => {
    const unit = fileNamed('banlieue-provider-cloud-hypervisor.service');
    expect(unit).toContain('Environment=BANLIEUE_CH_HOST_CONFIG=/etc/banlieue/cloud-hypervisor.yaml');
    expect(unit).toMatch(
      /ExecStart=\/usr\/local\/bin\/banlieue provider cloud-hypervisor --kubeconfig=\/etc\/banlieue\/kubeconfig --namespace=vms --provider=kvm1 --leader-election-namespace=vms --leader-election-id=banlieue-provider-cloud-hypervisor-kvm1/,
    );
    expect(unit).toContain('KillMode=process');
  });

  it("runs Node with the settings a role's Deployment gives it, and no memory limit on the unit (its VMMs share its cgroup)", () => {
    const unit = fileNamed('banlieue-provider-cloud-hypervisor.service');
    const environment = unit.split('\n').filter((line) => line.startsWith('Environment="'));
    expect(environment).toEqual(Object.entries(roleRuntimeEnv()).map(([name, value]) => `Environment="${name}=${value}"`));
    expect(environment.join('\n')).toContain('NODE_OPTIONS=--max-semi-space-size=1 --max-old-space-size=');
    expect(unit).not.toMatch(/^Memory(Max|High)=/m);
  });

  it('runs the provider and its VMMs unprivileged: its own user, /dev/kvm and /dev/net/tun only, CAP_NET_ADMIN only', () => {
    const unit = fileNamed('banlieue-provider-cloud-hypervisor.service');
    const lines = unit.split('\n');
    for (const line of [
      'User=banlieue',
      'Group=banlieue',
      'SupplementaryGroups=kvm',
      'NoNewPrivileges=yes',
      'CapabilityBoundingSet=CAP_NET_ADMIN',
      'AmbientCapabilities=CAP_NET_ADMIN',
      'DevicePolicy=closed',
      'DeviceAllow=/dev/kvm rw',
      'DeviceAllow=/dev/net/tun rw',
      'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
      'RestrictNamespaces=yes',
    ]) {
      expect(lines).toContain(line);
    }
    expect(unit).not.toMatch(/^User=root$/m);
  });

  it('sandboxes the unit: a read-only system with its own directories writable, no home, a private /tmp', () => {
    const lines = fileNamed('banlieue-provider-cloud-hypervisor.service').split('\n');
    for (const line of [
      'ProtectSystem=strict',
      'ReadWritePaths=/var/lib/banlieue/cloud-hypervisor',
      'ReadWritePaths=/var/lib/banlieue/images',
      'ReadWritePaths=/srv/vm/fast',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
    ]) {
      expect(lines).toContain(line);
    }
  });

  it('grants CAP_SYS_ADMIN and the mount and network namespaces only to a host whose bridges are in a network namespace', () => {
    const install = renderHostInstall({ ...options, netns: 'guests' });
    const lines = install.files.find((f) => f.path.endsWith('.service'))?.content.split('\n') ?? [];
    expect(lines).toContain('CapabilityBoundingSet=CAP_NET_ADMIN CAP_SYS_ADMIN');
    expect(lines).toContain('AmbientCapabilities=CAP_NET_ADMIN CAP_SYS_ADMIN');
    expect(lines).toContain('RestrictNamespaces=mnt net');
    expect(fileNamed('.service')).not.toContain('CAP_SYS_ADMIN');
  });

  it("makes the unit's user, in the kvm group, and gives it the host's directories", () => {
    expect(fileNamed('sysusers.d/banlieue-cloud-hypervisor.conf')).toMatch(
      /^u banlieue - "banlieue Cloud Hypervisor provider" \/var\/lib\/banlieue\/cloud-hypervisor$/m,
    );
    expect(fileNamed('sysusers.d/banlieue-cloud-hypervisor.conf')).toMatch(/^m banlieue kvm$/m);
    const tmpfiles = fileNamed('tmpfiles.d/banlieue-cloud-hypervisor.conf');
    expect(tmpfiles).toMatch(/^d \/var\/lib\/banlieue\/cloud-hypervisor 0700 banlieue banlieue -$/m);
    expect(tmpfiles).toMatch(/^d \/var\/lib\/banlieue\/images 0755 banlieue banlieue -$/m);
    expect(tmpfiles).toMatch(/^d \/srv\/vm\/fast 0700 banlieue banlieue -$/m);
  });

  it('gives the host an identity of its own, writing the status (and finalizer) of its own Provider only', () => {
    const docs = parseAllDocuments(fileNamed('rbac-kvm1.yaml')).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; rules?: unknown[]; roleRef?: { name: string } },
    );
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'ServiceAccount/banlieue-host-kvm1',
      'RoleBinding/banlieue-host-kvm1',
      'Role/banlieue-host-kvm1-provider',
      'RoleBinding/banlieue-host-kvm1-provider',
      'Role/banlieue-cloud-hypervisor-host-reads',
      'RoleBinding/banlieue-host-kvm1-reads',
      'ClusterRoleBinding/banlieue-host-kvm1-vms',
    ]);
    // No Secret in its ClusterRole: the Secrets it may read are listed by the controller in the host-reads Role,
    // made here without rules (applying another host's RBAC leaves the controller's list as it is).
    expect(docs.find((d) => d.metadata.name === 'banlieue-cloud-hypervisor-host-reads')).not.toHaveProperty('rules');
    expect(docs.find((d) => d.kind === 'Role')?.rules).toEqual([
      { apiGroups: ['banlieue.io'], resources: ['providers/status'], verbs: ['get', 'update', 'patch'], resourceNames: ['kvm1'] },
      { apiGroups: ['banlieue.io'], resources: ['providers'], verbs: ['patch'], resourceNames: ['kvm1'] },
    ]);
    expect(docs.filter((d) => d.roleRef).map((d) => d.roleRef?.name)).toEqual([
      'banlieue-provider-cloud-hypervisor',
      'banlieue-host-kvm1-provider',
      'banlieue-cloud-hypervisor-host-reads',
      'banlieue-provider-cloud-hypervisor-images',
    ]);
  });

  it('prints every file, the directories and the steps left for review', () => {
    const text = describeHostInstall(renderHostInstall(options));
    expect(text).toContain('# ----- /etc/systemd/system/banlieue-provider-cloud-hypervisor.service');
    expect(text).toContain('install -d -m 700 /var/lib/banlieue/cloud-hypervisor');
    expect(text).toContain("the Provider's spec.connection.endpoint is unix://kvm1/var/lib/banlieue/cloud-hypervisor");
  });

  it('refuses options that make no usable host config', () => {
    expect(() => renderHostInstall({ ...options, storageClasses: { fast: 'relative' } })).toThrow(/storageClasses\.fast "relative" is not an absolute path/);
    // ProtectHome= hides these from the unit; a space or % would be read by systemd, not as the path.
    expect(() => renderHostInstall({ ...options, storageClasses: { fast: '/home/vm' } })).toThrow(/\/home\/vm is under \/home/);
    expect(() => renderHostInstall({ ...options, imageDir: '/srv/my images' })).toThrow(/"\/srv\/my images" cannot be written in a systemd unit/);
  });
});
