// The `banlieue host install` options the host-install tests render with: one
// host kvm1 serving Provider vms/kvm1, with one storage and one network class.
import type { HostInstallOptions } from '../../../controller/cli/host-install.js';

export const HOST_INSTALL_OPTIONS: HostInstallOptions = {
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
