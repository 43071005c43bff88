// Fixed MAC addresses, one machine each per backend endpoint: two
// VMs with one MAC on one network lose packets to each other. A machine's
// spec names its MACs; before its VM is created they are checked against the
// machines of the same kind whose Providers name the same endpoint, by the
// one held-claims rule static addresses use: a machine whose VM may exist
// holds its MACs, and among the others the older one does.
//
// Endpoints are shared across namespaces, tenants are not: a machine of
// another namespace that has no VM yet holds its MACs only while none of them
// is held by a VM (one that waits behind a VM for ever would otherwise keep
// its other MACs from every namespace), and what this machine's readers see
// of a conflict names neither that namespace nor that machine.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { KindDefinition } from '../../../infra/api/kind.js';
import { claimedFirst, findHeldClaim } from '../held-claims.js';
import { sameEndpoint } from '../provider/endpoint.js';
import { mayHaveCreated } from './decide.js';
import { resolveMachinePlacement } from './placement.js';

/** A fixed MAC of one interface. */
export interface MacClaim {
  readonly interface: string;
  readonly mac: string;
}

export interface MacInUse extends MacClaim {
  /** `namespace/name` of the machine holding the MAC, when it is of this machine's namespace; another namespace's is never named. */
  readonly heldBy?: string;
  readonly message: string;
}

/** What the check needs of the cluster: Providers by namespace, and the machines of this kind. */
export interface MacNeighbourhood {
  readonly backend: string;
  readonly nicsField: string;
  readonly machines: readonly InfraMachine[];
  readonly providers: (namespace: string) => readonly Provider[];
}

type SchemaNode = { readonly type?: unknown; readonly items?: SchemaNode; readonly properties?: Readonly<Record<string, SchemaNode>> };

/** The spec list whose interfaces may fix a MAC (`network`, `nics`), read off the kind's schema: undefined when it has none. */
export function nicsFieldOf(kind: Pick<KindDefinition, 'spec'>): string | undefined {
  const properties = (kind.spec as SchemaNode).properties ?? {};
  return Object.keys(properties).find((field) => {
    const node = properties[field];
    return node?.type === 'array' && node.items?.properties?.macAddress !== undefined;
  });
}

/** The MACs a machine's spec fixes, as written. */
export function macClaims(machine: InfraMachine, nicsField: string): MacClaim[] {
  const nics = (machine.spec as Record<string, unknown>)[nicsField];
  if (!Array.isArray(nics)) return [];
  return nics.flatMap((nic: { name?: unknown; macAddress?: unknown }) =>
    typeof nic.macAddress === 'string' ? [{ interface: typeof nic.name === 'string' ? nic.name : '', mac: nic.macAddress }] : [],
  );
}

/**
 * The first MAC `machine` (whose VM is about to be created on `provider`)
 * fixes that another machine on the same endpoint holds.
 */
export function findMacInUse(machine: InfraMachine, provider: Provider, around: MacNeighbourhood): MacInUse | undefined {
  const claims = macClaims(machine, around.nicsField);
  if (claims.length === 0) return undefined;
  const endpoint = provider.spec.connection.endpoint;
  const namespace = machine.metadata.namespace ?? '';
  const ofThisNamespace = (other: InfraMachine): boolean => (other.metadata.namespace ?? '') === namespace;
  const onEndpoint = around.machines
    .filter((other) => {
      const on = providerOf(other, around);
      return on !== undefined && sameEndpoint(on.spec.connection.endpoint, endpoint);
    })
    .map((other) => ({ holder: other, claims: macClaims(other, around.nicsField) }));
  const vms = onEndpoint.filter((h) => mayHaveCreated(h.holder));
  // Held back: a VM holds one of its MACs, so it gets none until that VM goes.
  const heldBack = (other: InfraMachine, mine: readonly MacClaim[]): boolean => findHeldClaim(other, mine, vms, sameMac) !== undefined;
  const holders = onEndpoint.filter(
    (h) => mayHaveCreated(h.holder) || (claimedFirst(h.holder, machine) && (ofThisNamespace(h.holder) || !heldBack(h.holder, h.claims))),
  );
  const held = findHeldClaim(machine, claims, holders, sameMac);
  if (!held) return undefined;
  const { claim, holder } = held;
  const heldBy = ofThisNamespace(holder) ? `${namespace}/${holder.metadata.name ?? ''}` : undefined;
  const by = heldBy === undefined ? `a ${machine.kind} of another namespace` : `${machine.kind} ${heldBy}`;
  return {
    ...claim,
    ...(heldBy === undefined ? {} : { heldBy }),
    message: `spec.${around.nicsField} interface "${claim.interface}" MAC address ${claim.mac} is already held by ${by} on the same backend endpoint ${endpoint}: no VM is created with it; give this machine another MAC, or none (the backend then generates one)`,
  };
}

const sameMac = (a: MacClaim, b: MacClaim): boolean => a.mac.toLowerCase() === b.mac.toLowerCase();

/** The Provider a machine's VM is (or is to be) on: where it was created, else where its spec resolves to. */
function providerOf(machine: InfraMachine, around: MacNeighbourhood): Provider | undefined {
  const namespace = machine.metadata.namespace ?? '';
  const providers = around.providers(namespace);
  const named = machine.status?.placement?.provider ?? machine.spec.providerRef?.name;
  if (named !== undefined) return providers.find((p) => p.metadata.name === named);
  const failureDomain = machine.spec.failureDomain;
  const placement = resolveMachinePlacement({ backend: around.backend, namespace, ...(failureDomain ? { failureDomain } : {}), providers });
  return placement.ok ? placement.provider : undefined;
}
