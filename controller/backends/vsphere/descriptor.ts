// The vSphere backend: a vCenter (or vcsim) over vim25 SOAP.
import { vsphereApi, type VSphereMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildVSphereMachine, vsphereCarriedTargets, vsphereNamedTargets } from './build-machine.js';
import { createVsphereBackend } from './vsphere-backend.js';

export const vsphereDescriptor: BackendDescriptor<VSphereMachineSpec> = {
  api: vsphereApi,
  buildMachine: buildVSphereMachine,
  carriedTargets: vsphereCarriedTargets,
  namedTargets: vsphereNamedTargets,
  // Guests are clones of x86-64 templates on ESXi (vSphere runs on x86-64 only).
  machineCapacity: (spec) => ({ cpus: spec.numCpus, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
  createBackend: createVsphereBackend,
};
