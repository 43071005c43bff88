// The other VirtualMachines of its namespace a VM's decision reads, found
// through indexes of the VM cache rather than by reading every VM of the
// namespace on every pass (in a namespace of thousands, a round placing each
// VM once read every VM each time). A decision reads a sibling for three
// things only:
// - the room it takes where it is placed and not provisioned yet
//   (scheduler/capacity.ts): the siblings with a record of where they are
//   placed, not provisioned and not being deleted, and those this process
//   placed that the cache does not show yet;
// - a required anti-affinity term or a topology-spread constraint whose
//   selector it matches: a VM with either reads every VM of its namespace;
// - a static address it holds or claims (static-addresses.ts): the siblings
//   filed under one of the VM's own addresses.
// A sibling whose record of where it runs is missing (its status wiped, or
// moved without it) counts towards the room taken once its own pass has
// written that record back from its machine; room taken only ranks candidates.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { isPlacedNotProvisioned } from '../../scheduler/capacity.js';
import { keyOf, type Informer } from '../../runtime/informer.js';
import { canonicalAddress } from './static-addresses.js';

/** Index of the VMs placed and not provisioned yet, by namespace. */
export const PLACED_NOT_PROVISIONED = 'placedNotProvisioned';
/** Index of the VMs by `namespace/address`, for every static address they hold or claim. */
export const BY_STATIC_ADDRESS = 'staticAddress';

/** Add the indexes {@link siblingsRead} reads to the VM cache. */
export function indexSiblings(vms: Informer<VirtualMachine>): void {
  vms.addIndex(PLACED_NOT_PROVISIONED, placedNotProvisioned).addIndex(BY_STATIC_ADDRESS, staticAddresses);
}

/** `[namespace]` for a VM placed and not provisioned yet (the scheduler's own test), for the {@link PLACED_NOT_PROVISIONED} index. */
export function placedNotProvisioned(vm: VirtualMachine): string[] {
  return isPlacedNotProvisioned(vm) ? [vm.metadata.namespace ?? ''] : [];
}

/** `namespace/address` for each address the VM holds (status.heldAddresses) or claims (spec.networkOverrides), in canonical form. */
export function staticAddresses(vm: VirtualMachine): string[] {
  const held = (vm.status?.heldAddresses ?? []).map((h) => h.address);
  const claimed = (vm.spec.networkOverrides ?? []).map((o) => o.static.address);
  return [...held, ...claimed].map((address) => addressKey(vm.metadata.namespace ?? '', address));
}

/** Whether `vm`'s placement reads every VM of its namespace: it has anti-affinity terms or topology-spread constraints. */
export function readsEveryNeighbour(vm: VirtualMachine): boolean {
  const placement = vm.spec.placement;
  return (placement?.antiAffinity?.length ?? 0) > 0 || (placement?.topologySpread?.length ?? 0) > 0;
}

export interface SiblingQuery {
  readonly vm: VirtualMachine;
  /** The static addresses `vm` claims. */
  readonly addresses: readonly string[];
  /** Keys of the VMs (any namespace) this process placed that the cache may not show yet. */
  readonly assumed: Iterable<string>;
}

/** What {@link siblingsRead} reads of the VM cache (indexed by {@link indexSiblings}). */
export type SiblingCache = Pick<Informer<VirtualMachine>, 'get' | 'list' | 'byIndex'>;

/** The siblings of `query.vm` (never itself) its decision may read, from the cache, each once. */
export function siblingsRead(vms: SiblingCache, { vm, addresses, assumed }: SiblingQuery): VirtualMachine[] {
  const ns = vm.metadata.namespace ?? '';
  const self = vm.metadata.name;
  if (readsEveryNeighbour(vm)) return vms.list(ns).filter((o) => o.metadata.name !== self);
  const found = new Map<string, VirtualMachine>();
  const add = (o: VirtualMachine | undefined): void => {
    if (o && o.metadata.name !== self) found.set(keyOf(o), o);
  };
  vms.byIndex(PLACED_NOT_PROVISIONED, ns).forEach(add);
  for (const key of assumed) if (key.startsWith(`${ns}/`)) add(vms.get(key));
  for (const address of new Set(addresses.map((a) => addressKey(ns, a)))) vms.byIndex(BY_STATIC_ADDRESS, address).forEach(add);
  return [...found.values()];
}

// A namespace holds no slash.
const addressKey = (namespace: string, address: string): string => `${namespace}/${canonicalAddress(address)}`;
