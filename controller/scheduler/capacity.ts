// Room for a VM in a failure domain, from what its Provider last published
// (status.failureDomains[].capacity). A candidate whose published figures
// cannot take the VM is filtered with the resource named; those with room are
// ranked by how many more VMs like this one would still fit (score.ts) once
// the VMs placed there and not provisioned yet, which the backend may not show,
// are taken off. Those only rank: a disk's size is its most, thin and linked
// clones take less, and a burst must not wait for the Provider's next reading.
// A resource the Provider does not publish never keeps a VM out; free memory
// never does either (hypervisors overcommit it), only the memory in total.
import type { FailureDomainCapacity, FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { Candidate } from './candidates.js';
import { compareText } from './compare-text.js';
import { computeEffectiveHardware, type EffectiveHardware } from './effective-hardware.js';
import { resolveClass } from './resolve-class.js';

/** What one VM takes in one failure domain: CPUs (shared, so only a bound), memory, and GiB per storage target. */
export interface Demand {
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly storageGiB: ReadonlyMap<string, number>;
}

/**
 * How a candidate stands: no room (why), or room for `headroom` more VMs like this one (undefined:
 * the Provider publishes nothing) and the figures it was worked out from ({@link describeLimits}
 * says them, for the candidates a decision names).
 */
export type Room = { readonly fits: false; readonly why: string } | { readonly fits: true; readonly headroom?: number; readonly limits?: readonly Limit[] };

/** The VM's demand if placed in `failureDomain` of `provider`; undefined when its hardware overrides do not apply. */
export function demandOf(vm: VirtualMachine, vmClass: VMClass, provider: Provider, failureDomain: FailureDomainStatus): Demand | undefined {
  const hardware = computeEffectiveHardware(vm, vmClass);
  return hardware.ok ? demandIn(hardware.hardware, provider, failureDomain) : undefined;
}

/** What `hardware` takes in `failureDomain` of `provider`: its disks on the storage targets their classes resolve to there. */
export function demandIn(hardware: EffectiveHardware, provider: Provider, failureDomain: FailureDomainStatus): Demand {
  const storageGiB = new Map<string, number>();
  for (const disk of hardware.disks) {
    const { backendId } = resolveClass(provider.spec.capabilities?.storageClasses, disk.storageClass, failureDomain);
    storageGiB.set(backendId, (storageGiB.get(backendId) ?? 0) + disk.sizeGiB);
  }
  return { cpus: hardware.cpus, memoryMiB: hardware.memoryMiB, storageGiB };
}

/** The siblings placed and not provisioned yet, by Provider and failure domain (see {@link indexPending}). */
export type PendingIndex = ReadonlyMap<string, readonly VirtualMachine[]>;

/**
 * The siblings whose machine is not provisioned yet (placed by this controller, assumed or in
 * flight), by where they are placed: built once per decision, so that each candidate reads its own
 * rather than every candidate scanning every sibling (a namespace of 1,000 VMs over 1,000 failure
 * domains). A provisioned VM's share is in the Provider's next reading (the role reads it again
 * shortly after a machine is provisioned).
 */
export function indexPending(siblings: readonly VirtualMachine[]): PendingIndex {
  const index = new Map<string, VirtualMachine[]>();
  for (const sibling of siblings) {
    const scheduled = sibling.status?.scheduled;
    if (!scheduled || !isPlacedNotProvisioned(sibling)) continue;
    const place = placeKey(scheduled.providerName, scheduled.failureDomain);
    const placed = index.get(place);
    if (placed) placed.push(sibling);
    else index.set(place, [sibling]);
  }
  return index;
}

/** Whether `vm` has a record of where it is placed and is neither provisioned nor being deleted: its room is not in its Provider's reading yet. */
export function isPlacedNotProvisioned(vm: VirtualMachine): boolean {
  return vm.status?.scheduled !== undefined && vm.status.initialization?.provisioned !== true && !vm.metadata.deletionTimestamp;
}

/** What the siblings placed in the candidate and not provisioned yet take, which its published capacity may not show. */
export function pendingDemand(candidate: Candidate, pending: PendingIndex, classOf: (name: string) => VMClass | undefined): Demand[] {
  const placed = pending.get(placeKey(candidate.provider.metadata.name ?? '', candidate.failureDomain.name));
  if (!placed) return [];
  return placed.flatMap((sibling) => {
    const siblingClass = classOf(sibling.spec.classRef.name);
    const demand = siblingClass && demandOf(sibling, siblingClass, candidate.provider, candidate.failureDomain);
    return demand ? [demand] : [];
  });
}

// Neither a Provider's nor a failure domain's name holds a slash.
const placeKey = (providerName: string, failureDomain: string): string => `${providerName}/${failureDomain}`;

/** Whether `demand` fits the candidate's published capacity, and how many more like it would after `pending` and it. */
export function roomFor(candidate: Candidate, demand: Demand, pending: readonly Demand[]): Room {
  const capacity = candidate.failureDomain.capacity;
  if (!capacity) return { fits: true };
  if (capacity.cpus !== undefined && demand.cpus > capacity.cpus) {
    return { fits: false, why: `host CPUs ${whereOn(candidate)}: ${capacity.cpus} logical CPUs, ${demand.cpus} virtual CPUs needed` };
  }
  // Hypervisors overcommit memory (ballooning, swap, DRS): free memory ranks, only a VM larger than the
  // memory for VMs in total is left out.
  if (capacity.memoryMiB !== undefined && demand.memoryMiB > capacity.memoryMiB) {
    return {
      fits: false,
      why: `memory ${whereOn(candidate)}: ${formatSize(capacity.memoryMiB, 'MiB')} in total, ${formatSize(demand.memoryMiB, 'MiB')} needed`,
    };
  }
  const limits: Limit[] = [];
  const ranking: Limit[] = [];
  if (capacity.freeMemoryMiB !== undefined) {
    const taken = pending.reduce((sum, d) => sum + d.memoryMiB, 0);
    ranking.push({ what: 'memory', free: capacity.freeMemoryMiB, taken, need: demand.memoryMiB, unit: 'MiB' });
  }
  for (const [target, need] of [...demand.storageGiB].sort(([a], [b]) => compareText(a, b))) {
    const free = freeStorage(capacity, target);
    if (free === undefined) continue;
    const taken = pending.reduce((sum, d) => sum + (d.storageGiB.get(target) ?? 0), 0);
    limits.push({ what: `storage ${target}`, free, taken, need, unit: 'GiB' });
  }
  const short = limits.find((l) => l.free < l.need);
  if (short)
    return {
      fits: false,
      why: `${short.what} ${whereOn(candidate)}: ${formatSize(short.free, short.unit)} free, ${formatSize(short.need, short.unit)} needed`,
    };
  const ranked = [...ranking, ...limits];
  if (ranked.length === 0) return { fits: true };
  // How many more VMs like this one fit after it: the scarcest resource decides.
  const headroom = Math.min(...ranked.map((l) => (l.need === 0 ? Number.POSITIVE_INFINITY : Math.floor((l.free - l.taken - l.need) / l.need))));
  return { fits: true, headroom, limits: ranked };
}

/** The figures a candidate's room was worked out from, as the Scheduled condition says them: `memory 4 GiB free less 1 GiB placed, …`. */
export function describeLimits(limits: readonly Limit[]): string {
  return limits.map((l) => `${l.what} ${formatSize(l.free, l.unit)} free${l.taken > 0 ? ` less ${formatSize(l.taken, l.unit)} placed` : ''}`).join(', ');
}

const whereOn = (candidate: Candidate): string => `on Provider ${candidate.provider.metadata.name ?? ''}`;

/** One resource of a candidate: what it has free, what VMs placed there and not provisioned take, what this VM needs. */
export interface Limit {
  readonly what: string;
  readonly free: number;
  readonly taken: number;
  readonly need: number;
  readonly unit: 'MiB' | 'GiB';
}

function freeStorage(capacity: FailureDomainCapacity, target: string): number | undefined {
  return capacity.storage?.find((s) => s.target === target)?.freeGiB;
}

/** `2 GiB`, `512 MiB`: memory in GiB when whole. */
function formatSize(amount: number, unit: 'MiB' | 'GiB'): string {
  if (unit === 'MiB' && amount % 1024 === 0) return `${amount / 1024} GiB`;
  return `${amount} ${unit}`;
}
