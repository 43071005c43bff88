// The clusterctl variables the cluster templates read, beside each backend's
// own (its API entry's `clusterctl.machineSpec`).
import { integerVariable, stringVariable } from './template-variables.js';

// Set by clusterctl itself (its arguments and flags).
export const CLUSTER_NAME = stringVariable({
  name: 'CLUSTER_NAME',
  description: 'Name of the Cluster; prefixes every object.',
  sample: 'capi-quickstart',
  setBy: 'the `<name>` argument',
});
export const NAMESPACE = stringVariable({
  name: 'NAMESPACE',
  description: 'Namespace of every object; banlieue Providers of this namespace serve it.',
  sample: 'default',
  setBy: '`--target-namespace` (else the kubeconfig context namespace)',
});
export const KUBERNETES_VERSION = stringVariable({
  name: 'KUBERNETES_VERSION',
  description: 'Kubernetes version of the control plane and workers; the machine image must carry it.',
  sample: 'v1.34.1',
  setBy: '`--kubernetes-version`',
});
export const CONTROL_PLANE_MACHINE_COUNT = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_COUNT',
  description: 'Control-plane Machines.',
  sample: 1,
  setBy: '`--control-plane-machine-count` (default 1)',
});
export const WORKER_MACHINE_COUNT = integerVariable({
  name: 'WORKER_MACHINE_COUNT',
  description: 'Worker Machines.',
  sample: 0,
  setBy: '`--worker-machine-count` (default 0)',
});

// Every flavor.
export const CONTROL_PLANE_ENDPOINT_IP = stringVariable({
  name: 'CONTROL_PLANE_ENDPOINT_IP',
  description: 'Address of the API server (a VIP or load balancer you provide); immutable once set.',
  sample: '192.0.2.10',
});
export const CONTROL_PLANE_ENDPOINT_PORT = integerVariable({
  name: 'CONTROL_PLANE_ENDPOINT_PORT',
  description: 'Port of the API server.',
  default: 6443,
  sample: 6443,
});
export const CONTROL_PLANE_MACHINE_CPUS = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_CPUS',
  description: 'vCPUs of a control-plane machine.',
  default: 2,
  sample: 2,
});
export const CONTROL_PLANE_MACHINE_MEMORY_MIB = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_MEMORY_MIB',
  description: 'Memory of a control-plane machine, MiB.',
  default: 4096,
  sample: 4096,
});
export const WORKER_MACHINE_CPUS = integerVariable({ name: 'WORKER_MACHINE_CPUS', description: 'vCPUs of a worker machine.', default: 2, sample: 2 });
export const WORKER_MACHINE_MEMORY_MIB = integerVariable({
  name: 'WORKER_MACHINE_MEMORY_MIB',
  description: 'Memory of a worker machine, MiB.',
  default: 4096,
  sample: 4096,
});
export const MACHINE_OS_DISK_SIZE_GIB = integerVariable({
  name: 'MACHINE_OS_DISK_SIZE_GIB',
  description: 'OS disk of every machine, GiB (grown from the image, never shrunk).',
  default: 40,
  sample: 40,
});
