// Cloud Hypervisor: machines are built by the controller; the provider role runs on each host (docs/cloud-hypervisor.md).
import { cloudHypervisorApi, type CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildCloudHypervisorMachine } from './build-machine.js';
import { createCloudHypervisorBackend } from './ch-backend.js';

export const cloudHypervisorDescriptor: BackendDescriptor<CloudHypervisorMachineSpec> = {
  api: cloudHypervisorApi,
  // No Secret: the provider runs on the host it drives (docs/adr/0017).
  credentialKeys: [],
  buildMachine: buildCloudHypervisorMachine,
  createBackend: createCloudHypervisorBackend,
};
