// A namespace as `banlieue placement` reads it: a vCenter with two clusters publishing their
// room (one full of VMs, one not), a libvirt host that publishes no free memory, and VMs
// placed, pending and not placed.
import type { FailureDomainCapacity, Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { PlacedMachineObject, PlacementObjects } from '../../../../controller/cli/placement/placement-view.js';
import { failureDomain, provider, virtualMachine, vmClass, vsphereDomain } from '../../scheduler/fixtures.js';

export const C1_ROOM: FailureDomainCapacity = {
  cpus: 32,
  memoryMiB: 262144,
  freeMemoryMiB: 131072,
  storage: [
    { target: 'ds-hdd', freeGiB: 900, capacityGiB: 1000 },
    { target: 'ds-ssd', freeGiB: 1500, capacityGiB: 2000 },
  ],
};

export const vcenter: Provider = provider('vcenter-a', {
  failureDomains: [
    { ...vsphereDomain('vcenter-a', 'dc1', 'c1'), capacity: C1_ROOM },
    { ...vsphereDomain('vcenter-a', 'dc1', 'c2'), capacity: { cpus: 16, memoryMiB: 65536 } },
  ],
});

export const kvm: Provider = provider('kvm-a', {
  backend: 'libvirt',
  failureDomains: [{ ...failureDomain('kvm-a'), capacity: { cpus: 8, memoryMiB: 16384, storage: [{ target: 'ds-ssd', freeGiB: 90, capacityGiB: 100 }] } }],
});

/** A VM of class standard (2 CPUs, 4 GiB, a 40 GiB disk of class fast) placed on `where`, provisioned unless said. */
export function placed(name: string, where: readonly [string, string], props: { provisioned?: boolean; classRef?: string } = {}): VirtualMachine {
  const vm = virtualMachine(name, { scheduledOn: where });
  return {
    ...vm,
    spec: { ...vm.spec, classRef: { name: props.classRef ?? 'standard' } },
    status: { ...vm.status, ...(props.provisioned === false ? {} : { initialization: { provisioned: true } }) },
  };
}

export function unplaced(name: string, reason?: string): VirtualMachine {
  const vm = virtualMachine(name);
  const conditions = reason ? [{ type: 'Scheduled', status: 'False' as const, reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] : [];
  return { ...vm, status: { conditions } };
}

/** A machine of a CAPI Machine (no VirtualMachine controls it), created on `where`. */
export function capiMachine(kind: string, name: string, where: readonly [string, string], ownerKind = 'Machine'): PlacedMachineObject {
  return {
    kind,
    metadata: { name, namespace: 'team-a', ownerReferences: [{ apiVersion: 'x/v1', kind: ownerKind, name: 'm', uid: 'u', controller: true }] },
    status: { placement: { provider: where[0], failureDomain: where[1] } },
  };
}

export const C1 = ['vcenter-a', 'vcenter-a-dc1-c1'] as const;
export const C2 = ['vcenter-a', 'vcenter-a-dc1-c2'] as const;

export function objects(overrides: Partial<PlacementObjects> = {}): PlacementObjects {
  return {
    providers: [vcenter, kvm],
    virtualMachines: [placed('web-2', C1), placed('web-1', C1), placed('db-1', C1, { provisioned: false }), unplaced('web-9', 'InsufficientCapacity')],
    vmClasses: [vmClass('standard')],
    machines: [],
    ...overrides,
  };
}
