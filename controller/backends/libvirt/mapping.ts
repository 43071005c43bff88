// A libvirt host → its Provider's one failure domain (pure; upstream-backends
// §3.2): named after the Provider (or its failureDomainNameOverrides entry
// whose `cluster` is the hostname), labelled with the hostname; a storage class
// is available when its `pool` is an active pool of the host, a network class
// when its `network` is an active libvirt network or its `bridge` a host
// bridge. Capacity (node info, free memory, each active pool) goes into
// `capacity` and `raw`, rounded down to whole GiB so that a rediscovery of an
// idle host writes nothing.
import type { FailureDomainStatus, NetworkClassCapability, Provider, StorageClassCapability } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { toCapacity } from '../capacity.js';
import { failureDomainLabel } from '../failure-domain-name.js';

/** What discovery.ts reads from the host. */
export interface HostInventory {
  readonly hostname: string;
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly freeMemoryBytes: number;
  /** Active pools. */
  readonly pools: readonly { readonly name: string; readonly availableBytes: number; readonly capacityBytes?: number }[];
  /** Active libvirt networks. */
  readonly networks: readonly string[];
}

/** The `<domain type>` of a Provider's machines (spec.libvirt.domainType). */
export type DomainType = 'kvm' | 'qemu';

/** Keys of the failure domain's `raw` that machines read (build-machine.ts, the machine backend). */
export const RawKey = {
  Hostname: 'hostname',
  DomainType: 'domainType',
  /** Comma-separated bridge targets of the network classes: NICs on these are `<interface type='bridge'>`. */
  Bridges: 'bridges',
} as const;

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

export function toFailureDomains(provider: Provider, host: HostInventory): FailureDomainStatus[] {
  const name = failureDomainName(provider, host.hostname);
  const capabilities = provider.spec.capabilities;
  const bridges = [...new Set((capabilities?.networkClasses ?? []).flatMap((c) => (c.target?.bridge ? [c.target.bridge] : [])))].sort();
  const raw: Record<string, string> = {
    [RawKey.Hostname]: host.hostname,
    [RawKey.DomainType]: provider.spec.libvirt?.domainType ?? 'kvm',
    ...(bridges.length > 0 ? { [RawKey.Bridges]: bridges.join(',') } : {}),
    pools: host.pools.map((p) => p.name).join(','),
    networks: host.networks.join(','),
    cpus: String(host.cpus),
    memoryMiB: String(Math.floor(host.memoryBytes / MIB)),
    freeMemoryGiB: String(Math.floor(host.freeMemoryBytes / GIB)),
    ...Object.fromEntries(host.pools.map((p) => [`availableGiB.${p.name}`, String(Math.floor(p.availableBytes / GIB))])),
  };
  return [
    {
      name,
      labels: { name, hostname: host.hostname },
      attributes: {
        availableStorageClasses: available(capabilities?.storageClasses, host),
        availableNetworkClasses: available(capabilities?.networkClasses, host),
        ...(capabilities?.features === undefined ? {} : { features: [...capabilities.features] }),
        raw,
      },
      capacity: toCapacity({
        cpus: host.cpus,
        memoryBytes: host.memoryBytes,
        // Not free memory: libvirt's is the kernel's MemFree, which leaves out the page cache (a busy
        // host would look full), and the test driver's is a made-up 3 MiB.
        storage: host.pools.map((p) => ({
          target: p.name,
          freeBytes: p.availableBytes,
          ...(p.capacityBytes !== undefined ? { capacityBytes: p.capacityBytes } : {}),
        })),
      }),
    },
  ];
}

/** The Provider's name, or the override whose `cluster` is the hostname; as a DNS label. */
export function failureDomainName(provider: Provider, hostname: string): string {
  const override = provider.spec.failureDomainNameOverrides?.find((o) => o.cluster === hostname);
  return failureDomainLabel(override?.name ?? provider.metadata.name ?? hostname);
}

function available(classes: readonly (StorageClassCapability | NetworkClassCapability)[] | undefined, host: HostInventory): string[] {
  return (classes ?? []).filter((c) => reaches(c.target, host)).map((c) => c.name);
}

/** Every key of the target names something the host has; an unknown key never does. */
function reaches(target: Readonly<Record<string, string>> | undefined, host: HostInventory): boolean {
  const entries = Object.entries(target ?? {});
  if (entries.length === 0) return false;
  return entries.every(([key, value]) => {
    switch (key) {
      case 'pool':
        return host.pools.some((p) => p.name === value);
      case 'network':
        return host.networks.includes(value);
      case 'bridge':
        // libvirt's core API lists no host interfaces (that needs its interface driver, which
        // many hosts lack): a bridge is taken as declared, and a wrong one fails the domain's start.
        return value !== '';
      default:
        return false;
    }
  });
}
