// A storage or network class, resolved to the backend target it means in one
// failure domain (upstream ADR-0030: per-zone targets win over the default).
import type { StorageClassCapability, FailureDomainStatus, Provider } from '../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ResolvedClass } from '../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { ClassDisk, ClassInterface } from '../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { compareText } from './compare-text.js';

/** The fields storage and network class capabilities share. */
export type ClassCapability = Pick<StorageClassCapability, 'name' | 'target' | 'perZone'>;
type ZoneTarget = NonNullable<ClassCapability['perZone']>[number];

/**
 * `className` as offered in `offered`, for `failureDomain`: the target of the
 * first perZone entry matching the domain, else the class target; its first
 * value by key order. A class with no target (or not offered) resolves to its
 * own name, which backends take as the target name.
 */
export function resolveClass(offered: readonly ClassCapability[] | undefined, className: string, failureDomain: FailureDomainStatus): ResolvedClass {
  const capability = offered?.find((c) => c.name === className);
  const zone = capability?.perZone?.find((z) => isZoneOf(z, failureDomain));
  const target = zone?.target ?? capability?.target ?? {};
  const [first] = Object.entries(target).sort(([a], [b]) => compareText(a, b));
  return { className, backendId: first === undefined ? className : first[1] };
}

/** One entry per class disk, in disk order. */
export function resolveStorage(provider: Provider, disks: readonly ClassDisk[], failureDomain: FailureDomainStatus): ResolvedClass[] {
  const offered = provider.spec.capabilities?.storageClasses;
  return disks.map((disk) => resolveClass(offered, disk.storageClass, failureDomain));
}

/** One entry per class interface, in interface order. */
export function resolveNetworks(provider: Provider, interfaces: readonly ClassInterface[], failureDomain: FailureDomainStatus): ResolvedClass[] {
  const offered = provider.spec.capabilities?.networkClasses;
  return interfaces.map((nic) => resolveClass(offered, nic.networkClass, failureDomain));
}

// Every location field the entry sets must equal the domain's raw fact; an
// entry setting neither applies everywhere.
function isZoneOf(zone: ZoneTarget, failureDomain: FailureDomainStatus): boolean {
  const raw = failureDomain.attributes?.raw ?? {};
  const fits = (wanted: string | undefined, key: string): boolean => wanted === undefined || (Object.hasOwn(raw, key) && raw[key] === wanted);
  return fits(zone.datacenter, 'datacenter') && fits(zone.cluster, 'cluster');
}
