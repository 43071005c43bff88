// The desired infrastructure object of a placed VirtualMachine, complete, for
// server-side apply by the controller (upstream §2.4). Pure: the same inputs
// always give the same object, and absent optionals are omitted (never
// undefined) so the controller owns only the fields it sets. providerID is not
// set here: the provider role stamps it (DESIGN §3).
import type { Backend } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { CloudHypervisorMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { LibvirtMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { ProxmoxMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { VSphereMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { resolveBuildContext, type BuildContext, type BuildResult, type InfraBuildInput } from './build-context.js';
import { buildCloudHypervisorMachine } from './build-cloud-hypervisor.js';
import { buildLibvirtMachine } from './build-libvirt.js';
import { buildProxmoxMachine } from './build-proxmox.js';
import { buildVSphereMachine } from './build-vsphere.js';

export type { InfraBuildInput } from './build-context.js';

export type InfraMachineObject = VSphereMachine | ProxmoxMachine | LibvirtMachine | CloudHypervisorMachine;

export type InfraBuildResult = BuildResult<InfraMachineObject>;

const BUILDERS: Record<Backend, (context: BuildContext) => InfraBuildResult> = {
  vsphere: buildVSphereMachine,
  proxmox: buildProxmoxMachine,
  libvirt: buildLibvirtMachine,
  'cloud-hypervisor': buildCloudHypervisorMachine,
};

/** The infra machine for `input.placement`, or a message for an InfraBuildFailed condition. */
export function buildInfraMachine(input: InfraBuildInput): InfraBuildResult {
  const backend: string = input.placement.providerClass;
  // The class comes from a Provider object; the CRD enum guards it, this guards the enum.
  if (!Object.hasOwn(BUILDERS, backend)) return { ok: false, message: `providerClass "${backend}" has no infrastructure machine kind` };
  const resolved = resolveBuildContext(input);
  if (!resolved.ok) return resolved;
  return BUILDERS[input.placement.providerClass](resolved.context);
}
