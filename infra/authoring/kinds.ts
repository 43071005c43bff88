// The infrastructure kinds' constructs, for users' cdk8s apps (CAPI machines,
// templates and clusters written beside CAPI's own objects). Their props are
// the spec as the API server stores it, as the cdk8s-imported CAPI constructs
// take theirs:
//   new VSphereMachineTemplate(chart, 'workers', { metadata: { name: 'workers' }, spec: { template: { spec: {...} } } })
// The banlieue.io kinds have constructs of their own (virtual-machine.ts, provider.ts, vm-class.ts, vm-image.ts).
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
import { defineConstruct, type PropsOf } from './banlieue-api-object.js';

export class VSphereMachine extends defineConstruct(VSphereMachineKind) {}
export type VSphereMachineProps = PropsOf<typeof VSphereMachineKind>;
export class VSphereMachineTemplate extends defineConstruct(VSphereMachineTemplateKind) {}
export type VSphereMachineTemplateProps = PropsOf<typeof VSphereMachineTemplateKind>;
export class VSphereCluster extends defineConstruct(VSphereClusterKind) {}
export type VSphereClusterProps = PropsOf<typeof VSphereClusterKind>;
export class VSphereClusterTemplate extends defineConstruct(VSphereClusterTemplateKind) {}
export type VSphereClusterTemplateProps = PropsOf<typeof VSphereClusterTemplateKind>;
export class ProxmoxMachine extends defineConstruct(ProxmoxMachineKind) {}
export type ProxmoxMachineProps = PropsOf<typeof ProxmoxMachineKind>;
export class ProxmoxMachineTemplate extends defineConstruct(ProxmoxMachineTemplateKind) {}
export type ProxmoxMachineTemplateProps = PropsOf<typeof ProxmoxMachineTemplateKind>;
export class ProxmoxCluster extends defineConstruct(ProxmoxClusterKind) {}
export type ProxmoxClusterProps = PropsOf<typeof ProxmoxClusterKind>;
export class ProxmoxClusterTemplate extends defineConstruct(ProxmoxClusterTemplateKind) {}
export type ProxmoxClusterTemplateProps = PropsOf<typeof ProxmoxClusterTemplateKind>;
export class LibvirtMachine extends defineConstruct(LibvirtMachineKind) {}
export type LibvirtMachineProps = PropsOf<typeof LibvirtMachineKind>;
export class LibvirtMachineTemplate extends defineConstruct(LibvirtMachineTemplateKind) {}
export type LibvirtMachineTemplateProps = PropsOf<typeof LibvirtMachineTemplateKind>;
export class LibvirtCluster extends defineConstruct(LibvirtClusterKind) {}
export type LibvirtClusterProps = PropsOf<typeof LibvirtClusterKind>;
export class LibvirtClusterTemplate extends defineConstruct(LibvirtClusterTemplateKind) {}
export type LibvirtClusterTemplateProps = PropsOf<typeof LibvirtClusterTemplateKind>;
export class CloudHypervisorMachine extends defineConstruct(CloudHypervisorMachineKind) {}
export type CloudHypervisorMachineProps = PropsOf<typeof CloudHypervisorMachineKind>;
export class CloudHypervisorMachineTemplate extends defineConstruct(CloudHypervisorMachineTemplateKind) {}
export type CloudHypervisorMachineTemplateProps = PropsOf<typeof CloudHypervisorMachineTemplateKind>;
export class CloudHypervisorCluster extends defineConstruct(CloudHypervisorClusterKind) {}
export type CloudHypervisorClusterProps = PropsOf<typeof CloudHypervisorClusterKind>;
export class CloudHypervisorClusterTemplate extends defineConstruct(CloudHypervisorClusterTemplateKind) {}
export type CloudHypervisorClusterTemplateProps = PropsOf<typeof CloudHypervisorClusterTemplateKind>;
