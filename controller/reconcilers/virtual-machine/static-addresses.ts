// Static addresses a VM holds, per network class, so two VMs never get the same
// one (upstream ADR-0083). Each VM records what it holds in
// status.heldAddresses; a new claim is checked against its siblings' records.
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { findHeldClaim } from '../held-claims.js';

export type HeldAddress = NonNullable<NonNullable<VirtualMachine['status']>['heldAddresses']>[number];

export interface SiblingAddresses {
  readonly vm: VirtualMachine;
  /** What the sibling holds: its status.heldAddresses. */
  readonly heldAddresses: readonly HeldAddress[];
}

export interface DuplicateAddress extends HeldAddress {
  /** Name of the VirtualMachine already holding the address. */
  readonly heldBy: string;
  readonly message: string;
}

/** The addresses `vm` claims: one per network override naming a class interface. */
export function heldAddresses(vm: VirtualMachine, vmClass: VMClass): HeldAddress[] {
  return (vm.spec.networkOverrides ?? []).flatMap((o) => {
    const nic = vmClass.spec.network.interfaces.find((i) => i.name === o.name);
    return nic ? [{ interface: o.name, networkClass: nic.networkClass, address: o.static.address }] : [];
  });
}

/** The first address `vm` claims that another VM already holds on the same network class. */
export function findDuplicateAddress(vm: VirtualMachine, vmClass: VMClass, siblings: readonly SiblingAddresses[]): DuplicateAddress | undefined {
  const holders = siblings.map((s) => ({ holder: s.vm, claims: s.heldAddresses }));
  const held = findHeldClaim(vm, heldAddresses(vm, vmClass), holders, (h, c) => h.networkClass === c.networkClass && sameAddress(h.address, c.address));
  if (!held) return undefined;
  const { claim } = held;
  const heldBy = held.holder.metadata.name ?? '';
  return {
    ...claim,
    heldBy,
    message: `spec.networkOverrides "${claim.interface}" address ${claim.address} on network class "${claim.networkClass}" is already held by VirtualMachine "${heldBy}"`,
  };
}

/** Whether two spellings name one address: compared in canonical form (`2001:db8::10`, `2001:DB8:0::10` and the zeros written out are one). */
const sameAddress = (a: string, b: string): boolean => canonicalAddress(a) === canonicalAddress(b);

/**
 * The RFC 5952 form of an IPv6 address (lower case, longest zero run
 * compressed), as the WHATWG URL parser writes a host; other values lower-cased.
 */
export function canonicalAddress(address: string): string {
  if (!address.includes(':')) return address.toLowerCase();
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address.toLowerCase(); // Not an IPv6 address (the schema refuses it): compared as written.
  }
}
