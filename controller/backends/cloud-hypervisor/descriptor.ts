// Cloud Hypervisor: machines are built by the controller; the host-resident provider role is not in this version yet.
import { cloudHypervisorApi, type CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildCloudHypervisorMachine } from './build-machine.js';

export const cloudHypervisorDescriptor: BackendDescriptor<CloudHypervisorMachineSpec> = {
  api: cloudHypervisorApi,
  credentialKeys: [],
  buildMachine: buildCloudHypervisorMachine,
};
