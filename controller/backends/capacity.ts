// The one shape every backend publishes its room for new VMs in
// (status.failureDomains[].capacity), from what it read in bytes. Sizes are
// rounded down to whole GiB, so that a rediscovery of an idle backend writes
// nothing, and errs on the side of less room.
import type { FailureDomainCapacity } from '../../infra/api/banlieue.io/v1alpha1/provider.js';

const GIB = 1024 ** 3;

/** What a backend read about one failure domain; anything it cannot tell is left out. */
export interface CapacityReading {
  /** Logical CPUs of its largest host. */
  readonly cpus?: number;
  readonly memoryBytes?: number;
  readonly freeMemoryBytes?: number;
  /** Per storage target (the value a storage class's target names). */
  readonly storage?: readonly { readonly target: string; readonly freeBytes: number; readonly capacityBytes?: number }[];
}

export function toCapacity(reading: CapacityReading): FailureDomainCapacity {
  const mib = (bytes: number): number => wholeGiB(bytes) * 1024;
  const storage = [...(reading.storage ?? [])]
    .sort((a, b) => (a.target < b.target ? -1 : a.target > b.target ? 1 : 0))
    .map((s) => ({
      target: s.target,
      freeGiB: wholeGiB(s.freeBytes),
      ...(s.capacityBytes !== undefined ? { capacityGiB: wholeGiB(s.capacityBytes) } : {}),
    }));
  return {
    ...(reading.cpus !== undefined ? { cpus: Math.max(0, Math.floor(reading.cpus)) } : {}),
    ...(reading.memoryBytes !== undefined ? { memoryMiB: mib(reading.memoryBytes) } : {}),
    ...(reading.freeMemoryBytes !== undefined ? { freeMemoryMiB: mib(reading.freeMemoryBytes) } : {}),
    ...(storage.length > 0 ? { storage } : {}),
  };
}

function wholeGiB(bytes: number): number {
  return Math.max(0, Math.floor(bytes / GIB));
}
