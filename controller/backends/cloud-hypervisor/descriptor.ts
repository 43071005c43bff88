// Cloud Hypervisor: machines are built by the controller; the provider role runs on each host (docs/cloud-hypervisor.md).
import { cloudHypervisorApi, type CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildCloudHypervisorMachine, cloudHypervisorCarriedTargets } from './build-machine.js';
import { createCloudHypervisorBackend } from './ch-backend.js';

export const cloudHypervisorDescriptor: BackendDescriptor<CloudHypervisorMachineSpec> = {
  api: cloudHypervisorApi,
  buildMachine: buildCloudHypervisorMachine,
  carriedTargets: cloudHypervisorCarriedTargets,
  // Its storage and network classes are the host's own declarations (host config): nothing else is reachable.
  namedTargets: () => [],
  // The Node sees the boot vCPUs (more may be hot-plugged up to cpus.max). A guest has its host's
  // architecture, which the spec does not name: banlieue's Cloud Hypervisor hosts are x86-64.
  machineCapacity: (spec) => ({ cpus: spec.cpus.boot, memoryMiB: spec.memory.sizeMiB, architecture: 'amd64' }),
  createBackend: createCloudHypervisorBackend,
};
