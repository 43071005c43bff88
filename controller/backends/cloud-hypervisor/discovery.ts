// A Cloud Hypervisor host as one failure domain (pure). The Provider's classes
// name host classes (target `hostClass`, or `path`/`bridge` equal to what the
// host config declares, or, with no target, the host class of the same name);
// a class counts only while its directory or bridge exists. The failure domain
// is withdrawn (none published) while the host is over its capacity thresholds,
// so the scheduler places no new VM here; the VMs already here run on.
import type {
  FailureDomainCapacity,
  FailureDomainStatus,
  NetworkClassCapability,
  Provider,
  StorageClassCapability,
} from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { BackendError, BackendErrorKind } from '../backend-error.js';
import { toCapacity } from '../capacity.js';
import { resolveClass } from '../../scheduler/resolve-class.js';
import type { HostConfig } from './host-config.js';
import type { HostFacts } from './host/host-facts.js';
import { boundedName, LABEL_VALUE_MAX } from '../../../infra/api/bounded-name.js';

/** raw keys a machine pass reads back: the host class behind a Provider class. */
export const RAW_HOST = 'host';
export const rawStorageClass = (name: string): string => `storageClass.${name}`;
export const rawNetworkClass = (name: string): string => `networkClass.${name}`;

/** `unix://[host]/state/root`: the host is optional; the path is the host's state root. */
export function parseEndpoint(endpoint: string): { readonly host?: string; readonly path: string } | undefined {
  const match = /^unix:\/\/([^/]*)(\/.*)$/.exec(endpoint);
  if (!match?.[2]) return undefined;
  const path = match[2].length > 1 ? match[2].replace(/\/+$/, '') : match[2];
  return match[1] ? { host: match[1], path } : { path };
}

/**
 * Throws (Unreachable: ConnectFailed on the Provider) unless the Provider's endpoint
 * names this host's state root, and this host when it names one: a Provider meant for
 * another host is never served here.
 */
export function assertServes(provider: Provider, config: HostConfig): void {
  const endpoint = provider.spec.connection.endpoint;
  const parsed = parseEndpoint(endpoint);
  const mine = `unix://${config.hostName}${config.stateRoot}`;
  if (!parsed) throw new BackendError(BackendErrorKind.Rejected, `spec.connection.endpoint "${endpoint}" is not unix://[<host>]<state root>, e.g. ${mine}`);
  if (parsed.host !== undefined && parsed.host !== config.hostName) {
    throw new BackendError(
      BackendErrorKind.Unreachable,
      `spec.connection.endpoint "${endpoint}" names host ${parsed.host}; this is ${config.hostName} (${mine})`,
      { code: 'WrongHost' },
    );
  }
  if (parsed.path !== config.stateRoot) {
    throw new BackendError(
      BackendErrorKind.Unreachable,
      `spec.connection.endpoint "${endpoint}" names state root ${parsed.path}; this host's is ${config.stateRoot} (${mine})`,
      { code: 'WrongHost' },
    );
  }
}

/** Why the host takes no new VM now (memory, disk); undefined when it does. */
export function overCapacity(config: HostConfig, facts: HostFacts, offeredStorage: readonly string[]): string | undefined {
  const usedPercent = facts.memoryMiB === 0 ? 0 : (100 * (facts.memoryMiB - facts.memoryAvailableMiB)) / facts.memoryMiB;
  if (usedPercent >= config.capacity.maxMemoryUsedPercent) {
    return `memory ${usedPercent.toFixed(0)}% used, at or over capacity.maxMemoryUsedPercent ${config.capacity.maxMemoryUsedPercent}`;
  }
  const roomy = Object.values(facts.storage).some((s) => s.freeGiB !== undefined && s.freeGiB >= config.capacity.minStorageFreeGiB);
  if (!roomy && offeredStorage.length === 0) return `no storage class has ${config.capacity.minStorageFreeGiB} GiB free (capacity.minStorageFreeGiB)`;
  return undefined;
}

export interface HostDomain {
  /** The failure domain; none while the host is over capacity. */
  readonly failureDomains: FailureDomainStatus[];
  /** Why it was withdrawn. */
  readonly withdrawn?: string;
}

export function toFailureDomains(provider: Provider, config: HostConfig, facts: HostFacts): HostDomain {
  if (facts.unusable.length > 0)
    throw new BackendError(BackendErrorKind.Unreachable, `host ${config.hostName} cannot run VMs: ${facts.unusable.join('; ')}`, { code: 'HostNotReady' });
  const capabilities = provider.spec.capabilities;
  const usableStorage = (hostClass: string): boolean => (facts.storage[hostClass]?.freeGiB ?? -1) >= config.capacity.minStorageFreeGiB;
  const storage = mapClasses(capabilities?.storageClasses, config.storageClasses, 'path', usableStorage);
  const network = mapClasses(capabilities?.networkClasses, config.networkClasses, 'bridge', (hostClass) => facts.bridges.includes(hostClass));
  const withdrawn = overCapacity(config, facts, [...storage.keys()]);
  if (withdrawn) return { failureDomains: [], withdrawn };
  // A failure domain name is at most 63 characters; a Provider's name may run to 253.
  const name = boundedName(provider.metadata.name ?? config.hostName, LABEL_VALUE_MAX);
  const raw: Record<string, string> = {
    [RAW_HOST]: config.hostName,
    cpus: String(facts.cpus),
    memoryMiB: String(facts.memoryMiB),
    // Free memory is not published: it moves on every read, and each change would be a
    // Provider status write at idle. It decides withdrawal (overCapacity) instead.
    storageFreeGiB: Object.entries(facts.storage)
      .map(([cls, s]) => `${cls}=${s.freeGiB ?? 0}`)
      .join(','),
    nestedVirtualization: 'false',
  };
  for (const [cls, hostClass] of storage) raw[rawStorageClass(cls)] = hostClass;
  for (const [cls, hostClass] of network) raw[rawNetworkClass(cls)] = hostClass;
  return {
    failureDomains: [
      {
        name,
        labels: { name, host: config.hostName },
        attributes: {
          availableStorageClasses: [...storage.keys()],
          availableNetworkClasses: [...network.keys()],
          ...(capabilities?.features === undefined ? {} : { features: [...capabilities.features] }),
          raw,
        },
        capacity: capacityOf(provider, facts, storage, { name, attributes: { raw } }),
      },
    ],
  };
}

/**
 * CPUs, memory and each offered storage class's free space, by the target the scheduler resolves
 * the class to. Free memory is left out, as from raw.
 */
function capacityOf(provider: Provider, facts: HostFacts, storage: ReadonlyMap<string, string>, domain: FailureDomainStatus): FailureDomainCapacity {
  const GIB = 1024 ** 3;
  const offered = provider.spec.capabilities?.storageClasses;
  const targets = new Map<string, number>();
  for (const [cls, hostClass] of storage) {
    const freeGiB = facts.storage[hostClass]?.freeGiB;
    if (freeGiB !== undefined) targets.set(resolveClass(offered, cls, domain).backendId, freeGiB * GIB);
  }
  return toCapacity({
    cpus: facts.cpus,
    memoryBytes: facts.memoryMiB * 1024 ** 2,
    storage: [...targets].map(([target, freeBytes]) => ({ target, freeBytes })),
  });
}

/** Provider class → host class, for the classes this host has now. */
function mapClasses(
  classes: readonly (StorageClassCapability | NetworkClassCapability)[] | undefined,
  declared: Readonly<Record<string, string>>,
  valueKey: 'path' | 'bridge',
  present: (hostClass: string) => boolean,
): Map<string, string> {
  const mapped = new Map<string, string>();
  for (const cls of classes ?? []) {
    const hostClass = hostClassOf(cls.target, cls.name, declared, valueKey);
    if (hostClass !== undefined && present(hostClass)) mapped.set(cls.name, hostClass);
  }
  return mapped;
}

/** The host class a Provider class target names; undefined for a target naming nothing this host declares. */
export function hostClassOf(
  target: Readonly<Record<string, string>> | undefined,
  name: string,
  declared: Readonly<Record<string, string>>,
  valueKey: 'path' | 'bridge',
): string | undefined {
  const entries = Object.entries(target ?? {});
  if (entries.length === 0) return name in declared ? name : undefined;
  if (entries.length !== 1) return undefined;
  const [[key, value] = ['', '']] = entries;
  if (key === 'hostClass') return value in declared ? value : undefined;
  if (key === valueKey) return Object.entries(declared).find(([, v]) => v === value.replace(/\/+$/, ''))?.[0];
  return undefined;
}
