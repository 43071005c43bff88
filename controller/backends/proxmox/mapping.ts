// PVE nodes → Provider status.failureDomains (upstream-backends §2.2). Pure:
// one failure domain per online node, labelled with the node and the PVE
// cluster's name, with the classes whose target the node has, and the node's
// placement facts and capacity in `raw`.
//
// Class targets: a storage class `{storage: <id>}` needs that storage on the
// node, enabled, active and holding `images`; a network class `{bridge: <iface>}`
// needs that bridge (Linux, OVS or SDN vnet) on the node, and with `vlan: <tag>`
// a VLAN-aware one. Any other key is unsupported, so the class is unavailable.
//
// raw: `node` (where machines run), `datacenter` (the PVE cluster, which PVE's
// UI calls the Datacenter) and `cluster` (the node again: perZone targets and
// failureDomainNameOverrides key a Proxmox zone by `cluster`, as the Provider
// API documents), `isoStorage` (where seed ISOs go), `vlan.<class>` (a network
// class's VLAN tag, read by the machine builder), `version`, `endpoint`, and
// the node's capacity: `cpus`, `memoryGiB`, `memoryFreeGiB`, `storageFreeGiB.<storage>`
// (also in the common `capacity` the scheduler reads).
import type {
  FailureDomainCapacity,
  FailureDomainStatus,
  NetworkClassCapability,
  Provider,
  StorageClassCapability,
} from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { toCapacity } from '../capacity.js';
import { failureDomainLabel } from '../failure-domain-name.js';

export interface NodeStorage {
  readonly storage: string;
  /** Content types: images, iso, snippets… */
  readonly content: readonly string[];
  /** Enabled and active. */
  readonly usable: boolean;
  readonly shared: boolean;
  readonly availBytes?: number;
}

/** What one online node offers, as discovered (discovery.ts). */
export interface NodeInventory {
  readonly node: string;
  readonly clusterName: string;
  readonly version: string;
  readonly cpus?: number;
  readonly memoryBytes?: number;
  readonly memoryFreeBytes?: number;
  readonly storages: readonly NodeStorage[];
  readonly bridges: readonly { readonly iface: string; readonly vlanAware: boolean }[];
}

/** The storage class whose storage receives seed ISOs when it is usable on a node. */
export const SEED_ISO_CLASS = 'seed-iso';
const GIB = 1024 ** 3;

/** `<provider>-<node>` as a DNS label, or the override naming this node (`cluster: <node>`). */
export function failureDomainName(provider: Provider, node: NodeInventory): string {
  const override = (provider.spec.failureDomainNameOverrides ?? []).find(
    (o) => o.cluster === node.node && (o.datacenter === undefined || o.datacenter === node.clusterName),
  );
  return failureDomainLabel(override?.name ?? `${provider.metadata.name ?? ''}-${node.node}`);
}

export function toFailureDomains(provider: Provider, nodes: readonly NodeInventory[], endpoint: string): FailureDomainStatus[] {
  const capabilities = provider.spec.capabilities;
  const seen = new Map<string, string>();
  const domains = nodes.map((node): FailureDomainStatus => {
    const name = failureDomainName(provider, node);
    const other = seen.get(name);
    if (other !== undefined) throw new Error(`duplicate failure domain name ${name}: nodes ${other} and ${node.node}`);
    seen.set(name, node.node);
    const storageClasses = (capabilities?.storageClasses ?? []).filter((c) => c.name !== SEED_ISO_CLASS && hasStorage(targetOn(c, node), node, 'images'));
    const networkClasses = (capabilities?.networkClasses ?? []).filter((c) => hasBridge(targetOn(c, node), node));
    return {
      name,
      labels: { name, node: node.node, cluster: node.clusterName },
      attributes: {
        availableStorageClasses: storageClasses.map((c) => c.name),
        availableNetworkClasses: networkClasses.map((c) => c.name),
        ...(capabilities?.features === undefined ? {} : { features: [...capabilities.features] }),
        raw: rawOf(provider, node, endpoint, storageClasses, networkClasses),
      },
      capacity: capacityOf(node),
    };
  });
  return domains.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The node's CPUs and memory (/nodes) and each usable storage's free space, by storage ID (what a class's `storage` target names). */
function capacityOf(node: NodeInventory): FailureDomainCapacity {
  return toCapacity({
    ...(node.cpus !== undefined ? { cpus: node.cpus } : {}),
    ...(node.memoryBytes !== undefined ? { memoryBytes: node.memoryBytes } : {}),
    ...(node.memoryFreeBytes !== undefined ? { freeMemoryBytes: node.memoryFreeBytes } : {}),
    storage: node.storages.flatMap((s) => (s.usable && s.availBytes !== undefined ? [{ target: s.storage, freeBytes: s.availBytes }] : [])),
  });
}

function rawOf(
  provider: Provider,
  node: NodeInventory,
  endpoint: string,
  storageClasses: readonly StorageClassCapability[],
  networkClasses: readonly NetworkClassCapability[],
): Record<string, string> {
  const raw: Record<string, string> = { node: node.node, datacenter: node.clusterName, cluster: node.node, version: node.version, endpoint };
  const iso = isoStorageOf(provider, node);
  if (iso !== undefined) raw.isoStorage = iso;
  for (const c of networkClasses) {
    const vlan = targetOn(c, node)?.vlan;
    if (vlan !== undefined) raw[`vlan.${c.name}`] = vlan;
  }
  if (node.cpus !== undefined) raw.cpus = String(node.cpus);
  if (node.memoryBytes !== undefined) raw.memoryGiB = String(Math.floor(node.memoryBytes / GIB));
  if (node.memoryFreeBytes !== undefined) raw.memoryFreeGiB = String(Math.floor(node.memoryFreeBytes / GIB));
  for (const c of storageClasses) {
    const id = targetOn(c, node)?.storage;
    const storage = node.storages.find((s) => s.storage === id);
    if (storage?.availBytes !== undefined) raw[`storageFreeGiB.${storage.storage}`] = String(Math.floor(storage.availBytes / GIB));
  }
  return raw;
}

/**
 * Where seed ISOs go on the node: the `seed-iso` storage class's storage when
 * it holds `iso` content there; else the first usable storage holding `iso`
 * (shared ones first, then by name); none when the node has no ISO storage.
 */
export function isoStorageOf(provider: Provider, node: NodeInventory): string | undefined {
  const seedClass = provider.spec.capabilities?.storageClasses?.find((c) => c.name === SEED_ISO_CLASS);
  if (seedClass) {
    const target = targetOn(seedClass, node);
    return hasStorage(target, node, 'iso') ? target?.storage : undefined;
  }
  const candidates = node.storages.filter((s) => s.usable && s.content.includes('iso'));
  candidates.sort((a, b) => Number(b.shared) - Number(a.shared) || a.storage.localeCompare(b.storage));
  return candidates[0]?.storage;
}

/** The class target on this node: a perZone entry for the node (`cluster: <node>`, optionally `datacenter: <cluster>`) wins. */
function targetOn(capability: StorageClassCapability | NetworkClassCapability, node: NodeInventory): Readonly<Record<string, string>> | undefined {
  const zone = (capability.perZone ?? []).find(
    (z) => (z.cluster === undefined || z.cluster === node.node) && (z.datacenter === undefined || z.datacenter === node.clusterName),
  );
  return zone?.target ?? capability.target;
}

function hasStorage(target: Readonly<Record<string, string>> | undefined, node: NodeInventory, content: string): boolean {
  const keys = Object.keys(target ?? {});
  if (keys.length !== 1 || keys[0] !== 'storage') return false;
  return node.storages.some((s) => s.storage === target?.storage && s.usable && s.content.includes(content));
}

function hasBridge(target: Readonly<Record<string, string>> | undefined, node: NodeInventory): boolean {
  const keys = Object.keys(target ?? {});
  if (keys.length === 0 || keys.some((k) => k !== 'bridge' && k !== 'vlan') || target?.bridge === undefined) return false;
  const bridge = node.bridges.find((b) => b.iface === target.bridge);
  if (!bridge) return false;
  if (target.vlan === undefined) return true;
  return /^[1-9][0-9]{0,3}$/.test(target.vlan) && Number(target.vlan) <= 4094 && bridge.vlanAware;
}
