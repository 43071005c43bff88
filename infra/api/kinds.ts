// Every kind banlieue serves, in install order (core kinds first).
import { ProviderKind } from './banlieue.io/v1alpha1/provider.js';
import { VirtualMachineKind } from './banlieue.io/v1alpha1/virtual-machine.js';
import { VMClassKind } from './banlieue.io/v1alpha1/vm-class.js';
import { VMImageKind } from './banlieue.io/v1alpha1/vm-image.js';
import {
  CloudHypervisorMachineKind,
  CloudHypervisorMachineTemplateKind,
} from './infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import {
  CloudHypervisorClusterKind,
  CloudHypervisorClusterTemplateKind,
  LibvirtClusterKind,
  LibvirtClusterTemplateKind,
  ProxmoxClusterKind,
  ProxmoxClusterTemplateKind,
  VSphereClusterKind,
  VSphereClusterTemplateKind,
} from './infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { LibvirtMachineKind, LibvirtMachineTemplateKind } from './infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { ProxmoxMachineKind, ProxmoxMachineTemplateKind } from './infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { VSphereMachineKind, VSphereMachineTemplateKind } from './infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { KindDefinition } from './kind.js';

export const CORE_KINDS = [VirtualMachineKind, ProviderKind, VMClassKind, VMImageKind] as const;

/** Machine kinds by backend, as a Provider's providerClassRef names it. */
export const MACHINE_KIND_BY_BACKEND = {
  vsphere: VSphereMachineKind,
  proxmox: ProxmoxMachineKind,
  libvirt: LibvirtMachineKind,
  'cloud-hypervisor': CloudHypervisorMachineKind,
} as const;

/** InfraCluster kinds by backend. */
export const CLUSTER_KIND_BY_BACKEND = {
  vsphere: VSphereClusterKind,
  proxmox: ProxmoxClusterKind,
  libvirt: LibvirtClusterKind,
  'cloud-hypervisor': CloudHypervisorClusterKind,
} as const;

export const INFRA_MACHINE_KINDS = [VSphereMachineKind, ProxmoxMachineKind, LibvirtMachineKind, CloudHypervisorMachineKind] as const;
export const INFRA_MACHINE_TEMPLATE_KINDS = [
  VSphereMachineTemplateKind,
  ProxmoxMachineTemplateKind,
  LibvirtMachineTemplateKind,
  CloudHypervisorMachineTemplateKind,
] as const;
export const INFRA_CLUSTER_KINDS = [VSphereClusterKind, ProxmoxClusterKind, LibvirtClusterKind, CloudHypervisorClusterKind] as const;
export const INFRA_CLUSTER_TEMPLATE_KINDS = [
  VSphereClusterTemplateKind,
  ProxmoxClusterTemplateKind,
  LibvirtClusterTemplateKind,
  CloudHypervisorClusterTemplateKind,
] as const;

export const INFRA_KINDS: readonly KindDefinition[] = [
  ...INFRA_MACHINE_KINDS,
  ...INFRA_MACHINE_TEMPLATE_KINDS,
  ...INFRA_CLUSTER_KINDS,
  ...INFRA_CLUSTER_TEMPLATE_KINDS,
];

export const ALL_KINDS: readonly KindDefinition[] = [...CORE_KINDS, ...INFRA_KINDS];

export function kindByName(kind: string): KindDefinition {
  const def = ALL_KINDS.find((k) => k.kind === kind);
  if (!def) throw new Error(`unknown kind ${kind}`);
  return def;
}
