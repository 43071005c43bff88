// What `banlieue placement` shows, computed from the objects it read (pure): one row per
// (Provider, failure domain) with the room the Provider publishes there, the VirtualMachines
// placed there (status.scheduled) with what they ask for, and the machines placed there
// without a VirtualMachine (a CAPI Machine's, status.placement). What a VM asks for is the
// scheduler's own demand (its class with spec.hardwareOverride, each disk's storage class
// resolved in that failure domain), so the view adds up what placement checked.
import type { FailureDomainCapacity, FailureDomainStatus, Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { MachinePlacementRecord } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { OwnerReference } from '../../../infra/api/kind.js';
import { ConditionType } from '../../../infra/api/conditions.js';
import { demandOf } from '../../scheduler/capacity.js';
import { compareText } from '../../scheduler/compare-text.js';

/** An infrastructure machine as the view reads it: its kind, owners and recorded placement. */
export interface PlacedMachineObject {
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly ownerReferences?: readonly OwnerReference[] };
  readonly status?: { readonly placement?: MachinePlacementRecord };
}

/** What the view is computed from: the objects of the namespaces asked for. */
export interface PlacementObjects {
  readonly providers: readonly Provider[];
  readonly virtualMachines: readonly VirtualMachine[];
  /** VMClasses are cluster-scoped: all of them. */
  readonly vmClasses: readonly VMClass[];
  readonly machines: readonly PlacedMachineObject[];
}

/** One VirtualMachine placed in a failure domain, and what it asks for there (unknown when its class is missing). */
export interface PlacedVm {
  readonly name: string;
  readonly cpus?: number;
  readonly memoryMiB?: number;
  /** GiB of its disks per storage target. */
  readonly storageGiB: ReadonlyMap<string, number>;
  /** Its machine is provisioned: the Provider's free figures already count it. */
  readonly provisioned: boolean;
}

/** What the VMs of a row ask for in total. */
export interface PlacedTotals {
  readonly vms: number;
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly storageGiB: ReadonlyMap<string, number>;
  /** VMs whose class was not found: their share is not in the sums. */
  readonly unknown: number;
}

export interface PlacementRow {
  readonly namespace: string;
  readonly provider: string;
  /** The Provider's class (backend); empty when the Provider is gone. */
  readonly backend: string;
  readonly failureDomain: string;
  /** The Provider publishes this failure domain today; false when only placements name it. */
  readonly published: boolean;
  readonly capacity?: FailureDomainCapacity;
  readonly vms: readonly PlacedVm[];
  /** Machines placed here that no VirtualMachine controls, as `Kind/name`. */
  readonly machines: readonly string[];
  readonly placed: PlacedTotals;
}

/** A VirtualMachine with no placement yet, and why (its Scheduled condition). */
export interface UnplacedVm {
  readonly namespace: string;
  readonly name: string;
  readonly reason: string;
}

export interface PlacementView {
  readonly rows: readonly PlacementRow[];
  readonly unplaced: readonly UnplacedVm[];
}

/** The view of `objects`: every published failure domain and every place a VM or machine names, sorted by namespace, Provider, failure domain. */
export function computePlacementView(objects: PlacementObjects): PlacementView {
  const rows = new Map<string, MutableRow>();
  const rowOf = (namespace: string, providerName: string, failureDomain: string): MutableRow => {
    const key = JSON.stringify([namespace, providerName, failureDomain]);
    let row = rows.get(key);
    if (!row) {
      const provider = objects.providers.find((p) => p.metadata.namespace === namespace && p.metadata.name === providerName);
      row = { namespace, provider: providerName, providerObject: provider, failureDomain, published: undefined, vms: [], machines: [] };
      rows.set(key, row);
    }
    return row;
  };
  for (const provider of objects.providers) {
    for (const fd of provider.status?.failureDomains ?? []) {
      rowOf(provider.metadata.namespace ?? '', provider.metadata.name ?? '', fd.name).published = fd;
    }
  }
  const unplaced: UnplacedVm[] = [];
  for (const vm of objects.virtualMachines) {
    const namespace = vm.metadata.namespace ?? '';
    const scheduled = vm.status?.scheduled;
    if (!scheduled) {
      unplaced.push({ namespace, name: vm.metadata.name ?? '', reason: whyUnplaced(vm) });
      continue;
    }
    const row = rowOf(namespace, scheduled.providerName, scheduled.failureDomain);
    row.vms.push(toPlacedVm(vm, objects.vmClasses, row));
  }
  for (const machine of objects.machines) {
    const placement = machine.status?.placement;
    if (!placement || isControlledByVm(machine)) continue;
    rowOf(machine.metadata.namespace ?? '', placement.provider, placement.failureDomain).machines.push(`${machine.kind}/${machine.metadata.name ?? ''}`);
  }
  const sorted = [...rows.values()].sort(
    (a, b) => compareText(a.namespace, b.namespace) || compareText(a.provider, b.provider) || compareText(a.failureDomain, b.failureDomain),
  );
  return {
    rows: sorted.map(toRow),
    unplaced: unplaced.sort((a, b) => compareText(a.namespace, b.namespace) || compareText(a.name, b.name)),
  };
}

interface MutableRow {
  readonly namespace: string;
  readonly provider: string;
  readonly providerObject: Provider | undefined;
  readonly failureDomain: string;
  published: FailureDomainStatus | undefined;
  readonly vms: PlacedVm[];
  readonly machines: string[];
}

function toRow(row: MutableRow): PlacementRow {
  const vms = [...row.vms].sort((a, b) => compareText(a.name, b.name));
  return {
    namespace: row.namespace,
    provider: row.provider,
    backend: row.providerObject?.spec.providerClassRef.name ?? '',
    failureDomain: row.failureDomain,
    published: row.published !== undefined,
    ...(row.published?.capacity ? { capacity: row.published.capacity } : {}),
    vms,
    machines: [...row.machines].sort(compareText),
    placed: totalsOf(vms),
  };
}

function toPlacedVm(vm: VirtualMachine, vmClasses: readonly VMClass[], row: MutableRow): PlacedVm {
  const name = vm.metadata.name ?? '';
  const provisioned = vm.status?.initialization?.provisioned === true;
  const vmClass = vmClasses.find((c) => c.metadata.name === vm.spec.classRef.name);
  // A failure domain no longer published is resolved as one publishing nothing: each disk on its class's default target.
  const failureDomain = row.published ?? { name: row.failureDomain };
  const demand = vmClass && row.providerObject ? demandOf(vm, vmClass, row.providerObject, failureDomain) : undefined;
  if (!demand) return { name, storageGiB: new Map(), provisioned };
  return { name, cpus: demand.cpus, memoryMiB: demand.memoryMiB, storageGiB: demand.storageGiB, provisioned };
}

function totalsOf(vms: readonly PlacedVm[]): PlacedTotals {
  const storageGiB = new Map<string, number>();
  let cpus = 0;
  let memoryMiB = 0;
  let unknown = 0;
  for (const vm of vms) {
    if (vm.cpus === undefined || vm.memoryMiB === undefined) {
      unknown++;
      continue;
    }
    cpus += vm.cpus;
    memoryMiB += vm.memoryMiB;
    for (const [target, gib] of vm.storageGiB) storageGiB.set(target, (storageGiB.get(target) ?? 0) + gib);
  }
  return { vms: vms.length, cpus, memoryMiB, storageGiB, unknown };
}

/** The VM's Scheduled=False reason, or that it was not scheduled yet. */
function whyUnplaced(vm: VirtualMachine): string {
  const scheduled = vm.status?.conditions?.find((c) => c.type === ConditionType.Scheduled);
  return scheduled && scheduled.status === 'False' ? scheduled.reason : 'NotScheduledYet';
}

/** A machine a VirtualMachine controls is that VM's: it is counted once, as the VM. */
function isControlledByVm(machine: PlacedMachineObject): boolean {
  return (machine.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.kind === 'VirtualMachine');
}
