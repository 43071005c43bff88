// A CloudHypervisorMachine as the provider role hands it to the backend, for
// the peer suites that drive the backend directly: one small VM on the test
// host's "fast" storage class with one NIC on its "lan" network class.
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { MachineRequest } from '../../../controller/backends/backend.js';
import { TEST_IMAGE } from '../../support/cloud-hypervisor/host.js';

export interface ChMachineOptions {
  readonly uuid: string;
  /** The machine's name. */
  readonly name: string;
  /** The machine whose mark the request carries. @default name */
  readonly owner?: string;
  /** The failure domain's raw facts, as discovery published them. */
  readonly raw: Readonly<Record<string, string>>;
  /** The NIC's static address. */
  readonly address: string;
  readonly spec?: Partial<CloudHypervisorMachineSpec>;
  readonly userData?: string;
}

export function chMachineRequest(options: ChMachineOptions): MachineRequest<CloudHypervisorMachineSpec> {
  const { uuid, name } = options;
  return {
    name,
    namespace: 'ns',
    uuid,
    providerID: `cloudhypervisor://${uuid}`,
    owner: { kind: 'CloudHypervisorMachine', namespace: 'ns', name: options.owner ?? name },
    spec: {
      providerRef: { name: 'host-a' },
      bootSource: { kind: 'image', image: TEST_IMAGE },
      cpus: { boot: 1 },
      memory: { sizeMiB: 128 },
      osDiskSizeGiB: 1,
      storageClass: 'fast',
      nics: [{ name: 'eth0', networkClass: 'lan', ipam: { static: { address: options.address, prefix: 24 } } }],
      ...options.spec,
    },
    raw: options.raw,
    userData: options.userData,
  };
}
