// A *MachineTemplate's status (pure): the Node one machine of it becomes, for
// the cluster-autoscaler to scale a MachineDeployment from zero (CAPI
// InfraMachineTemplate contract, "support cluster autoscaling from zero";
// proposal 20210310-opt-in-autoscaling-from-zero). Computed from the spec, so
// an idle reconcile compares equal and writes nothing.
import type { MachineTemplateStatus } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { MachineCapacity } from '../../backends/descriptor.js';

/**
 * banlieue boots Linux guests only: user-data and network config reach them
 * through cloud-init (guestinfo, NoCloud).
 */
export const NODE_OPERATING_SYSTEM = 'linux';

/**
 * `capacity` in Node terms: cpu a whole number of CPUs, memory in Mi. Both as
 * strings: the autoscaler reads status.capacity as a string map and drops a
 * map holding a number.
 */
export function decideTemplateStatus(capacity: MachineCapacity): MachineTemplateStatus {
  return {
    capacity: { cpu: String(capacity.cpus), memory: `${capacity.memoryMiB}Mi` },
    nodeInfo: { architecture: capacity.architecture, operatingSystem: NODE_OPERATING_SYSTEM },
  };
}
