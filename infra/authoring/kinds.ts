// One typed construct per banlieue kind, for users' cdk8s apps:
//   new VirtualMachine(chart, 'web-1', { metadata: { name: 'web-1', namespace: 'vms' }, spec: {...} })
import { VirtualMachineKind } from '../api/banlieue.io/v1alpha1/virtual-machine.js';
import { ProviderKind } from '../api/banlieue.io/v1alpha1/provider.js';
import { VMClassKind } from '../api/banlieue.io/v1alpha1/vm-class.js';
import { VMImageKind } from '../api/banlieue.io/v1alpha1/vm-image.js';
import {
  VSphereClusterKind,
  VSphereClusterTemplateKind,
  VSphereMachineKind,
  VSphereMachineTemplateKind,
} from '../api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import {
  ProxmoxClusterKind,
  ProxmoxClusterTemplateKind,
  ProxmoxMachineKind,
  ProxmoxMachineTemplateKind,
} from '../api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import {
  LibvirtClusterKind,
  LibvirtClusterTemplateKind,
  LibvirtMachineKind,
  LibvirtMachineTemplateKind,
} from '../api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import {
  CloudHypervisorClusterKind,
  CloudHypervisorClusterTemplateKind,
  CloudHypervisorMachineKind,
  CloudHypervisorMachineTemplateKind,
} from '../api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { defineConstruct } from './banlieue-api-object.js';

export const VirtualMachine = defineConstruct(VirtualMachineKind);
export const Provider = defineConstruct(ProviderKind);
export const VMClass = defineConstruct(VMClassKind);
export const VMImage = defineConstruct(VMImageKind);
export const VSphereMachine = defineConstruct(VSphereMachineKind);
export const VSphereMachineTemplate = defineConstruct(VSphereMachineTemplateKind);
export const ProxmoxMachine = defineConstruct(ProxmoxMachineKind);
export const ProxmoxMachineTemplate = defineConstruct(ProxmoxMachineTemplateKind);
export const LibvirtMachine = defineConstruct(LibvirtMachineKind);
export const LibvirtMachineTemplate = defineConstruct(LibvirtMachineTemplateKind);
export const CloudHypervisorMachine = defineConstruct(CloudHypervisorMachineKind);
export const CloudHypervisorMachineTemplate = defineConstruct(CloudHypervisorMachineTemplateKind);
export const VSphereCluster = defineConstruct(VSphereClusterKind);
export const VSphereClusterTemplate = defineConstruct(VSphereClusterTemplateKind);
export const ProxmoxCluster = defineConstruct(ProxmoxClusterKind);
export const ProxmoxClusterTemplate = defineConstruct(ProxmoxClusterTemplateKind);
export const LibvirtCluster = defineConstruct(LibvirtClusterKind);
export const LibvirtClusterTemplate = defineConstruct(LibvirtClusterTemplateKind);
export const CloudHypervisorCluster = defineConstruct(CloudHypervisorClusterKind);
export const CloudHypervisorClusterTemplate = defineConstruct(CloudHypervisorClusterTemplateKind);
