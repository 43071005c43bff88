// Proxmox VE: machines are built by the controller; the provider role is not in this version yet.
import { proxmoxApi, type ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { ProxmoxCredentialKeys } from './client/credentials.js';
import { buildProxmoxMachine } from './build-machine.js';

export const proxmoxDescriptor: BackendDescriptor<ProxmoxMachineSpec> = {
  api: proxmoxApi,
  credentialKeys: Object.values(ProxmoxCredentialKeys),
  buildMachine: buildProxmoxMachine,
};
