// libvirt: machines are built by the controller; the provider role is not in this version yet.
import { libvirtApi, type LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { buildLibvirtMachine } from './build-machine.js';

export const libvirtDescriptor: BackendDescriptor<LibvirtMachineSpec> = {
  api: libvirtApi,
  credentialKeys: [],
  buildMachine: buildLibvirtMachine,
};
