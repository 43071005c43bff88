// Addresses from CAPI IPAM pools (`addressesFromPools` on a NIC's ipam), as
// CAPV and CAPMOX take them: one IPAddressClaim per pool, named
// `<machine>-<nic index>-<pool index>` and owned by the machine; an IPAM
// provider binds it to an IPAddress (status.addressRef), whose address,
// prefix and gateway then reach the backend as the NIC's static address, so
// every backend renders them as it renders a static address today (CAPI
// contracts/ipam.md). The claims go when the machine goes: deleted by name
// before its finalizer comes off, and by the garbage collector through the
// owner reference should anything be left; unless the machine retains its VM
// (deletionPolicy Retain): then the owner reference goes and the claims stay.
//
// Claims and addresses are read by name, not watched: only machines with
// pools ever ask, and the provider role must start (and run every other
// machine) where CAPI's IPAM CRDs are not installed. A machine waiting for
// an address comes back every poll period.
import { isIpAddress } from '../../../infra/api/names.js';
import { type IpPoolReference, type Ipam, type StaticAddress } from '../../../infra/api/addressing.js';
import { Reason } from '../../../infra/api/conditions.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import { boundedName, OBJECT_NAME_MAX } from '../../../infra/api/bounded-name.js';

export const IPAM_GROUP = 'ipam.cluster.x-k8s.io';
/** The version CAPI v1.11+ stores (the pinned CAPI module serves v1alpha1, v1beta1 and v1beta2). */
export const IPAM_API_VERSION = `${IPAM_GROUP}/v1beta2`;
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** One claim a machine needs: for which NIC, from which pool, and where the spec asks for it (for messages). */
export interface PoolClaim {
  readonly name: string;
  readonly nicIndex: number;
  readonly pool: IpPoolReference;
  readonly at: string;
}

/** What this module reads of a machine: any InfraMachine kind. */
export interface ClaimingMachine {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly spec: object;
}

export type ClaimedAddresses<Spec> = { readonly ok: true; readonly spec: Spec } | { readonly ok: false; readonly reason: Reason; readonly message: string };

interface Nic {
  readonly ipam?: Ipam;
}

/**
 * The spec's NIC list: its one top-level list whose entries carry `ipam`
 * (`network` or `nics`, by kind), so this code names no backend.
 */
function nicList(spec: object): { readonly field: string; readonly nics: readonly Nic[] } | undefined {
  for (const [field, value] of Object.entries(spec)) {
    if (Array.isArray(value) && value.some((entry) => typeof entry === 'object' && entry !== null && 'ipam' in entry)) return { field, nics: value as Nic[] };
  }
  return undefined;
}

/** The claims `spec` asks for, in NIC then pool order (pure). */
export function decidePoolClaims(machineName: string, spec: object): PoolClaim[] {
  const list = nicList(spec);
  if (!list) return [];
  return list.nics.flatMap((nic, nicIndex) =>
    (nic.ipam?.addressesFromPools ?? []).map((pool, poolIndex) => ({
      // A machine's name may take all 253 characters a claim's may have.
      name: boundedName(`${machineName}-${nicIndex}-${poolIndex}`, OBJECT_NAME_MAX),
      nicIndex,
      pool,
      at: `spec.${list.field}[${nicIndex}].ipam.addressesFromPools[${poolIndex}]`,
    })),
  );
}

/** `spec` with each pool-addressed NIC's ipam replaced by the static address its claim was bound to (pure). */
export function withClaimedAddresses<Spec extends object>(spec: Spec, addresses: ReadonlyMap<number, StaticAddress>): Spec {
  const list = nicList(spec);
  if (!list || addresses.size === 0) return spec;
  const nics = list.nics.map((nic, i) => {
    const address = addresses.get(i);
    return address ? { ...nic, ipam: { static: address } } : nic;
  });
  return { ...spec, [list.field]: nics };
}

interface OwnerReference {
  readonly uid?: string;
  readonly controller?: boolean;
}

interface IPAddressClaim {
  readonly metadata: { readonly ownerReferences?: readonly OwnerReference[]; readonly deletionTimestamp?: string };
  readonly spec?: { readonly poolRef?: Partial<IpPoolReference> };
  readonly status?: { readonly addressRef?: { readonly name?: string } };
}

interface IPAddress {
  readonly spec?: {
    readonly address?: string;
    readonly prefix?: number;
    readonly gateway?: string;
    readonly claimRef?: { readonly name?: string };
    readonly poolRef?: Partial<IpPoolReference>;
  };
}

const collection = (namespace: string, resource: 'ipaddressclaims' | 'ipaddresses'): string => `/apis/${IPAM_API_VERSION}/namespaces/${namespace}/${resource}`;
const samePool = (a: Partial<IpPoolReference> | undefined, b: IpPoolReference): boolean => a?.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name;
const describePool = (pool: IpPoolReference): string => `${pool.kind}.${pool.apiGroup} ${pool.name}`;
const isOwnedBy = (claim: IPAddressClaim, uid: string | undefined): boolean =>
  uid !== undefined && (claim.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === uid);

async function getOrUndefined<T>(api: KubeApi, path: string): Promise<T | undefined> {
  try {
    return await api.request<T>('GET', path);
  } catch (err) {
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
}

/** The claim as the machine creates it: controlled by the machine, so it goes with it (CAPI contracts/ipam.md). */
function claimObject(machine: ClaimingMachine, claim: PoolClaim): object {
  const clusterName = machine.metadata.labels?.[CLUSTER_NAME_LABEL];
  return {
    apiVersion: IPAM_API_VERSION,
    kind: 'IPAddressClaim',
    metadata: {
      name: claim.name,
      namespace: machine.metadata.namespace,
      // The cluster-name label lets clusterctl move take the claim along with its cluster.
      ...(clusterName ? { labels: { [CLUSTER_NAME_LABEL]: clusterName } } : {}),
      ownerReferences: [
        {
          apiVersion: machine.apiVersion,
          kind: machine.kind,
          name: machine.metadata.name,
          uid: machine.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { poolRef: claim.pool, ...(clusterName ? { clusterName } : {}) },
  };
}

type ClaimAnswer = { readonly ok: true; readonly address: StaticAddress } | { readonly ok: false; readonly reason: Reason; readonly message: string };

/** The static address `claim` is bound to; created first when it does not exist. */
async function claimAddress(api: KubeApi, machine: ClaimingMachine, claim: PoolClaim): Promise<ClaimAnswer> {
  const namespace = machine.metadata.namespace ?? '';
  const waitingFor = (what: string): ClaimAnswer => ({
    ok: false,
    reason: Reason.WaitingForIPAddress,
    message: `IPAddressClaim ${claim.name} (${claim.at}, pool ${describePool(claim.pool)}): ${what}`,
  });
  const refused = (what: string): ClaimAnswer => ({
    ok: false,
    reason: Reason.IPAddressClaimFailed,
    message: `IPAddressClaim ${claim.name} (${claim.at}): ${what}`,
  });
  let found: IPAddressClaim | undefined;
  try {
    found = await getOrUndefined<IPAddressClaim>(api, `${collection(namespace, 'ipaddressclaims')}/${claim.name}`);
    if (!found) {
      await api.request('POST', collection(namespace, 'ipaddressclaims'), { body: claimObject(machine, claim) });
      return waitingFor('created; no IPAM provider has bound an address to it yet');
    }
  } catch (err) {
    // The API server answers 404 for the collection itself when no CRD serves it.
    if (err instanceof ApiStatusError && err.code === 404)
      return refused(`the API server does not serve ipaddressclaims.${IPAM_API_VERSION}: install Cluster API's IPAM CRDs`);
    if (err instanceof ApiStatusError && err.code === 409) return waitingFor('created meanwhile; reading it on the next pass');
    throw err;
  }
  // A claim of that name that is not this machine's (a leftover, or one a tenant wrote) never gives it an address.
  if (!isOwnedBy(found, machine.metadata.uid)) return refused('exists and is not controlled by this machine; delete it or rename the machine');
  if (found.metadata.deletionTimestamp) return waitingFor('is being deleted; a new one is created once it is gone');
  if (!samePool(found.spec?.poolRef, claim.pool))
    return refused(`claims from another pool than ${describePool(claim.pool)}; delete the claim to claim from the pool the spec names`);
  const addressName = found.status?.addressRef?.name;
  if (!addressName) return waitingFor('no IPAM provider has bound an address to it yet');
  const bound = await getOrUndefined<IPAddress>(api, `${collection(namespace, 'ipaddresses')}/${addressName}`);
  if (!bound) return waitingFor(`its IPAddress ${addressName} does not exist yet`);
  return toStaticAddress(claim, addressName, bound);
}

/** The IPAddress as a static address, once it is checked to be the claim's and usable. */
function toStaticAddress(claim: PoolClaim, addressName: string, bound: IPAddress): ClaimAnswer {
  const spec = bound.spec;
  const refused = (what: string): ClaimAnswer => ({
    ok: false,
    reason: Reason.IPAddressClaimFailed,
    message: `IPAddress ${addressName} of IPAddressClaim ${claim.name} (${claim.at}): ${what}`,
  });
  if (spec?.claimRef?.name !== claim.name || !samePool(spec.poolRef, claim.pool))
    return refused(`is not for this claim (its spec.claimRef or spec.poolRef names another)`);
  if (spec.address === undefined || !isIpAddress(spec.address)) return refused(`spec.address ${JSON.stringify(spec.address)} is not an IP address`);
  const maxPrefix = spec.address.includes(':') ? 128 : 32;
  if (spec.prefix === undefined || !Number.isInteger(spec.prefix) || spec.prefix < 0 || spec.prefix > maxPrefix)
    return refused(`spec.prefix ${String(spec.prefix)} is not a prefix length of ${spec.address}`);
  if (spec.gateway !== undefined && !isIpAddress(spec.gateway)) return refused(`spec.gateway ${JSON.stringify(spec.gateway)} is not an IP address`);
  return { ok: true, address: { address: spec.address, prefix: spec.prefix, ...(spec.gateway !== undefined ? { gateway: spec.gateway } : {}) } };
}

/**
 * The machine's spec with every pool-addressed NIC given the address its claim
 * is bound to, creating the claims it lacks; or why it has to wait. A spec
 * without pools comes back as it is, with no API call.
 */
export async function ensureClaimedAddresses<Spec extends object>(
  api: KubeApi,
  machine: ClaimingMachine & { readonly spec: Spec },
): Promise<ClaimedAddresses<Spec>> {
  const claims = decidePoolClaims(machine.metadata.name ?? '', machine.spec);
  if (claims.length === 0) return { ok: true, spec: machine.spec };
  const addresses = new Map<number, StaticAddress>();
  const pending: string[] = [];
  // Every claim is created in this pass, so the IPAM provider binds them all at once.
  for (const claim of claims) {
    const answer = await claimAddress(api, machine, claim);
    if (!answer.ok && answer.reason !== Reason.WaitingForIPAddress) return answer;
    if (answer.ok) addresses.set(claim.nicIndex, answer.address);
    else pending.push(answer.message);
  }
  if (pending.length > 0) return { ok: false, reason: Reason.WaitingForIPAddress, message: pending.join('; ') };
  return { ok: true, spec: withClaimedAddresses(machine.spec, addresses) };
}

/** Deletes the machine's claims (those it controls), releasing their addresses to the pool. */
export async function deletePoolClaims(api: KubeApi, machine: ClaimingMachine): Promise<string[]> {
  return forEachOwnedClaim(api, machine, async (path) => {
    await api.request('DELETE', path);
  });
}

/**
 * Lets the machine's claims (those it controls) outlive it (deletionPolicy Retain): its owner
 * reference is removed, so the garbage collector leaves them and their addresses stay allocated
 * to the VM it leaves on the backend. The patch tests the reference it removes: a list changed
 * meanwhile fails it, and the next pass reads the claim again.
 */
export async function keepPoolClaims(api: KubeApi, machine: ClaimingMachine): Promise<string[]> {
  return forEachOwnedClaim(api, machine, async (path, claim) => {
    const index = (claim.metadata.ownerReferences ?? []).findIndex((r) => r.uid === machine.metadata.uid);
    const reference = `/metadata/ownerReferences/${index}`;
    const patch = [
      { op: 'test', path: `${reference}/uid`, value: machine.metadata.uid },
      { op: 'remove', path: reference },
    ];
    await api.request('PATCH', path, { body: patch, contentType: 'application/json-patch+json' });
  });
}

/** Runs `act` on each claim the machine controls; returns their names (a claim gone meanwhile is skipped). */
async function forEachOwnedClaim(api: KubeApi, machine: ClaimingMachine, act: (path: string, claim: IPAddressClaim) => Promise<void>): Promise<string[]> {
  const namespace = machine.metadata.namespace ?? '';
  const done: string[] = [];
  for (const claim of decidePoolClaims(machine.metadata.name ?? '', machine.spec)) {
    const path = `${collection(namespace, 'ipaddressclaims')}/${claim.name}`;
    const found = await getOrUndefined<IPAddressClaim>(api, path);
    if (!found || !isOwnedBy(found, machine.metadata.uid)) continue;
    try {
      await act(path, found);
      done.push(claim.name);
    } catch (err) {
      if (!(err instanceof ApiStatusError && err.code === 404)) throw err;
    }
  }
  return done;
}
