// The CAPI Machine that owns an infrastructure machine, read by name when its
// failure domain or bootstrap Secret is needed (never watched: most passes
// do not need it).
import { ApiStatusError, type KubeApi } from '../runtime/kube-api.js';

export interface CapiMachine {
  readonly spec?: { readonly failureDomain?: string; readonly bootstrap?: { readonly dataSecretName?: string } };
}

export interface Owned {
  readonly metadata: {
    readonly namespace?: string;
    readonly ownerReferences?: readonly { readonly apiVersion: string; readonly kind: string; readonly name: string; readonly controller?: boolean }[];
  };
}

/** The owner reference of a CAPI Machine, if a Machine controls `obj`. */
export function capiOwner(obj: Owned): { readonly apiVersion: string; readonly name: string } | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Machine' && r.apiVersion.startsWith('cluster.x-k8s.io/'));
}

/** The owning Machine; undefined when there is none or it is gone. */
export async function getOwningMachine(api: KubeApi, obj: Owned): Promise<CapiMachine | undefined> {
  const owner = capiOwner(obj);
  if (!owner) return undefined;
  try {
    return await api.get<CapiMachine>({ apiVersion: owner.apiVersion, kind: 'Machine', metadata: { name: owner.name, namespace: obj.metadata.namespace ?? '' } });
  } catch (err) {
    if (err instanceof ApiStatusError && err.code === 404) return undefined;
    throw err;
  }
}
