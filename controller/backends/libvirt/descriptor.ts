// The libvirt backend: one libvirt host per Provider, over libvirt's own RPC protocol.
import { libvirtApi, type LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildLibvirtMachine, libvirtCarriedTargets, libvirtNamedTargets } from './build-machine.js';
import { createLibvirtBackend } from './libvirt-backend.js';

export const libvirtDescriptor: BackendDescriptor<LibvirtMachineSpec> = {
  api: libvirtApi,
  buildMachine: buildLibvirtMachine,
  carriedTargets: libvirtCarriedTargets,
  namedTargets: libvirtNamedTargets,
  // The domain is built with <os><type arch="x86_64"> (machine/domain-xml.ts).
  machineCapacity: (spec) => ({ cpus: spec.vcpus, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
  createBackend: createLibvirtBackend,
};
