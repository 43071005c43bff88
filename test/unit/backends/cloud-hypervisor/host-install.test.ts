// `banlieue host install`: the host config the provider reads, a unit that leaves VMMs running, RBAC scoped to one Provider.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { describeHostInstall, renderHostInstall, type HostInstallOptions } from '../../../../controller/cli/host-install.js';
import { parseHostConfig } from '../../../../controller/backends/cloud-hypervisor/host-config.js';

const options: HostInstallOptions = {
  provider: 'kvm1',
  namespace: 'vms',
  hostName: 'kvm1',
  kubeconfig: '/etc/banlieue/kubeconfig',
  configPath: '/etc/banlieue/cloud-hypervisor.yaml',
  stateRoot: '/var/lib/banlieue/cloud-hypervisor',
  imageDir: '/var/lib/banlieue/images',
  vmmBinary: '/usr/local/bin/cloud-hypervisor',
  storageClasses: { fast: '/srv/vm/fast' },
  networkClasses: { lan: 'br0' },
  banlieue: '/usr/local/bin/banlieue',
};
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

  it('gives the host an identity of its own, writing the status (and finalizer) of its own Provider only', () => {
    const docs = parseAllDocuments(fileNamed('rbac-kvm1.yaml')).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string }; rules?: unknown[]; roleRef?: { name: string } },
    );
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'ServiceAccount/banlieue-host-kvm1',
      'RoleBinding/banlieue-host-kvm1',
      'Role/banlieue-host-kvm1-provider',
      'RoleBinding/banlieue-host-kvm1-provider',
      'ClusterRoleBinding/banlieue-host-kvm1-vms',
    ]);
    expect(docs.find((d) => d.kind === 'Role')?.rules).toEqual([
      { apiGroups: ['banlieue.io'], resources: ['providers/status'], verbs: ['get', 'update', 'patch'], resourceNames: ['kvm1'] },
      { apiGroups: ['banlieue.io'], resources: ['providers'], verbs: ['patch'], resourceNames: ['kvm1'] },
    ]);
    expect(docs.filter((d) => d.roleRef).map((d) => d.roleRef?.name)).toEqual([
      'banlieue-provider-cloud-hypervisor',
      'banlieue-host-kvm1-provider',
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
  });
});
