// vSphere inventory → Provider status.failureDomains (upstream-backends §1.2).
// Pure: one failure domain per (datacenter, cluster), named, labelled and with
// the storage/network classes whose target the cluster reaches.
import type { FailureDomainStatus, NetworkClassCapability, Provider, StorageClassCapability } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { toCapacity, type CapacityReading } from '../capacity.js';
import { failureDomainLabel } from '../failure-domain-name.js';

/** What one cluster reaches, as discovered (see discovery.ts). */
export interface ClusterInventory {
  datacenter: string;
  cluster: string;
  /** The cluster's root resource pool. */
  resourcePool?: string;
  /** `storagePod`: name of the StoragePod (SDRS cluster) the datastore belongs to. */
  datastores: { name: string; storagePod?: string }[];
  /** `distributed`: a DistributedVirtualPortgroup (else a standard network). */
  networks: { name: string; distributed: boolean }[];
  /** Its usable hosts and datastores, read from their summaries. */
  capacity?: CapacityReading;
}

/** `<provider>-<dc>-<cluster>` as a DNS label, or the matching override (slugified). */
export function failureDomainName(provider: Provider, datacenter: string, cluster: string): string {
  const override = bestMatch(provider.spec.failureDomainNameOverrides ?? [], datacenter, cluster);
  return failureDomainLabel(override?.name ?? `${provider.metadata.name}-${datacenter}-${cluster}`);
}

/** One failure domain per cluster, sorted by name; throws on a duplicate name. */
export function toFailureDomains(provider: Provider, inventory: readonly ClusterInventory[]): FailureDomainStatus[] {
  const capabilities = provider.spec.capabilities;
  const seen = new Map<string, ClusterInventory>();
  const domains = inventory.map((zone): FailureDomainStatus => {
    const name = failureDomainName(provider, zone.datacenter, zone.cluster);
    const other = seen.get(name);
    if (other !== undefined) {
      throw new Error(
        `duplicate failure domain name ${name}: datacenter ${other.datacenter} cluster ${other.cluster} and datacenter ${zone.datacenter} cluster ${zone.cluster}`,
      );
    }
    seen.set(name, zone);
    const raw: Record<string, string> = { datacenter: zone.datacenter, cluster: zone.cluster };
    if (zone.resourcePool !== undefined) raw.resourcePool = zone.resourcePool;
    return {
      name,
      labels: { name, datacenter: zone.datacenter, cluster: zone.cluster },
      attributes: {
        availableStorageClasses: availableClasses(capabilities?.storageClasses, zone),
        availableNetworkClasses: availableClasses(capabilities?.networkClasses, zone),
        ...(capabilities?.features === undefined ? {} : { features: [...capabilities.features] }),
        raw,
      },
      ...(zone.capacity ? { capacity: toCapacity(zone.capacity) } : {}),
    };
  });
  return domains.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function availableClasses(classes: readonly (StorageClassCapability | NetworkClassCapability)[] | undefined, zone: ClusterInventory): string[] {
  return (classes ?? []).filter((c) => reaches(zoneTarget(c, zone), zone)).map((c) => c.name);
}

/** The class target in this zone: a matching perZone entry wins over `target`. */
function zoneTarget(capability: StorageClassCapability | NetworkClassCapability, zone: ClusterInventory): Readonly<Record<string, string>> | undefined {
  return bestMatch(capability.perZone ?? [], zone.datacenter, zone.cluster)?.target ?? capability.target;
}

/** Every key of the target must match something the cluster reaches; an unknown key never does. */
function reaches(target: Readonly<Record<string, string>> | undefined, zone: ClusterInventory): boolean {
  const entries = Object.entries(target ?? {});
  if (entries.length === 0) return false;
  return entries.every(([key, value]) => {
    switch (key) {
      case 'datastore':
        return zone.datastores.some((ds) => ds.name === value);
      case 'datastoreCluster':
        return zone.datastores.some((ds) => ds.storagePod === value);
      case 'portGroup':
        return zone.networks.some((n) => !n.distributed && n.name === value);
      case 'distributedPortGroup':
        return zone.networks.some((n) => n.distributed && n.name === value);
      default:
        // tagCategory, tag and anything else: unsupported, so unavailable.
        return false;
    }
  });
}

/**
 * The entry matching (datacenter, cluster); an entry that leaves a field out
 * matches any value of it. The most specific match wins, then the first.
 */
function bestMatch<T extends { datacenter?: string; cluster?: string }>(entries: readonly T[], datacenter: string, cluster: string): T | undefined {
  let best: T | undefined;
  let bestScore = -1;
  for (const entry of entries) {
    if (entry.datacenter !== undefined && entry.datacenter !== datacenter) continue;
    if (entry.cluster !== undefined && entry.cluster !== cluster) continue;
    const score = (entry.datacenter === undefined ? 0 : 1) + (entry.cluster === undefined ? 0 : 1);
    if (score > bestScore) {
      best = entry;
      bestScore = score;
    }
  }
  return best;
}
