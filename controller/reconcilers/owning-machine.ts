// The CAPI Machine that owns an infrastructure machine, read by name when its
// failure domain or bootstrap Secret is needed (never watched: most passes
// do not need it). An owner reference is only a claim: anyone who can write
// the infra machine can point it at any Machine. The Machine counts only when
// it claims the infra machine back (its uid is the reference's, its
// spec.infrastructureRef names this object): else a tenant could have its own
// machine booted with another Machine's bootstrap Secret.
import { ApiStatusError } from '../runtime/kube-api.js';
import type { ObjectReader } from '../runtime/shared-reads.js';

export interface CapiMachine {
  readonly metadata?: { readonly uid?: string };
  readonly spec?: {
    readonly failureDomain?: string;
    readonly bootstrap?: { readonly dataSecretName?: string };
    /** v1beta2 names the group; a v1beta1 Machine, its apiVersion. */
    readonly infrastructureRef?: { readonly apiGroup?: string; readonly apiVersion?: string; readonly kind?: string; readonly name?: string };
  };
}

interface OwnerRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

export interface Owned {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: {
    readonly name?: string;
    readonly namespace?: string;
    readonly ownerReferences?: readonly OwnerRef[];
  };
}

/** The owner reference of a CAPI Machine, if a Machine controls `obj`. */
export function capiOwner(obj: Owned): OwnerRef | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Machine' && r.apiVersion.startsWith('cluster.x-k8s.io/'));
}

/**
 * Whether Cluster API made `obj` and a Machine is still to own it: CAPI's MachineSet (and
 * MachinePool) creates the infrastructure machine, owned by itself, before the Machine that
 * takes it over and names its bootstrap data. (The cluster-name label alone says nothing:
 * machines written by hand carry it too.)
 */
export function awaitsCapiMachine(obj: Owned): boolean {
  return !capiOwner(obj) && (obj.metadata.ownerReferences?.some((r) => r.apiVersion.startsWith('cluster.x-k8s.io/')) ?? false);
}

/** Whether `machine` is the one `owner` names and it names `obj` as its infrastructure. */
export function claimsBack(machine: CapiMachine, owner: OwnerRef, obj: Owned): boolean {
  const ref = machine.spec?.infrastructureRef;
  const group = obj.apiVersion?.split('/')[0];
  return (
    machine.metadata?.uid !== undefined &&
    machine.metadata.uid === owner.uid &&
    (ref?.apiGroup ?? ref?.apiVersion?.split('/')[0]) === group &&
    ref?.kind === obj.kind &&
    ref?.name === obj.metadata.name
  );
}

/** The owning Machine; undefined when there is none, it is gone, or it does not claim `obj` back. */
export async function getOwningMachine(api: ObjectReader, obj: Owned): Promise<CapiMachine | undefined> {
  const owner = capiOwner(obj);
  if (!owner) return undefined;
  let machine: CapiMachine;
  try {
    machine = await api.get<CapiMachine>({
      apiVersion: owner.apiVersion,
      kind: 'Machine',
      metadata: { name: owner.name, namespace: obj.metadata.namespace ?? '' },
    });
  } catch (err) {
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
  return claimsBack(machine, owner, obj) ? machine : undefined;
}
