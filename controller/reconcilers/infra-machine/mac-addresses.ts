// Fixed MAC addresses, one machine each per backend endpoint: two
// VMs with one MAC on one network lose packets to each other. A machine's
// spec names its MACs; before its VM is created they are checked against the
// machines of the same kind whose Providers name the same endpoint, by the
// one held-claims rule static addresses use: a machine whose VM may exist
// holds its MACs, and among the others the older one does.
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
  /** `namespace/name` of the machine holding the MAC. */
  readonly heldBy: string;
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
  const holders = around.machines
    .filter((other) => mayHaveCreated(other) || claimedFirst(other, machine))
    .filter((other) => {
      const on = providerOf(other, around);
      return on !== undefined && sameEndpoint(on.spec.connection.endpoint, endpoint);
    })
    .map((other) => ({ holder: other, claims: macClaims(other, around.nicsField) }));
  const held = findHeldClaim(machine, claims, holders, (a, b) => a.mac.toLowerCase() === b.mac.toLowerCase());
  if (!held) return undefined;
  const heldBy = `${held.holder.metadata.namespace ?? ''}/${held.holder.metadata.name ?? ''}`;
  const { claim } = held;
  return {
    ...claim,
    heldBy,
    message: `spec.${around.nicsField} interface "${claim.interface}" MAC address ${claim.mac} is already held by ${machine.kind} ${heldBy} on the same backend endpoint ${endpoint}: no VM is created with it; give this machine another MAC, or none (the backend then generates one)`,
  };
}

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
