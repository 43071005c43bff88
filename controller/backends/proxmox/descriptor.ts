// Proxmox VE: machines built by the controller, run by `banlieue provider proxmox`.
import { proxmoxApi, type ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildProxmoxMachine, proxmoxCarriedTargets, proxmoxNamedTargets } from './build-machine.js';
import { createProxmoxBackend } from './proxmox-backend.js';

export const proxmoxDescriptor: BackendDescriptor<ProxmoxMachineSpec> = {
  api: proxmoxApi,
  buildMachine: buildProxmoxMachine,
  carriedTargets: proxmoxCarriedTargets,
  namedTargets: proxmoxNamedTargets,
  // sockets × cores vCPUs (sockets defaults to 1, as the schema says); Proxmox VE runs x86-64 QEMU guests only.
  machineCapacity: (spec) => ({ cpus: (spec.sockets ?? 1) * spec.cores, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
  createBackend: createProxmoxBackend,
};
