// What `banlieue placement` reads from the API server: the Providers and VirtualMachines of one
// namespace or of all, every VMClass (cluster-scoped) and every backend's machines. VMClasses
// and machines are extras: a user who may not list them still gets the table, without the sums
// their classes give or the machines no VM controls. A kind the server does not serve lists
// nothing (banlieue not installed there: the table says nothing was found).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { ProviderKind } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { VirtualMachineKind } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { VMClassKind } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import { apiVersionOf, type KindDefinition } from '../../../infra/api/kind.js';
import { INFRA_MACHINE_KINDS } from '../../../infra/api/kinds.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import { listSoon } from '../namespace-leftovers.js';
import type { PlacedMachineObject, PlacementObjects } from './placement-view.js';

/** One namespace, or every namespace (undefined). */
export type NamespaceScope = string | undefined;

export async function readPlacementObjects(api: KubeApi, namespace: NamespaceScope): Promise<PlacementObjects> {
  const [providers, virtualMachines, vmClasses, machines] = await Promise.all([
    list<Provider>(api, ProviderKind, namespace),
    list<VirtualMachine>(api, VirtualMachineKind, namespace),
    listIfAllowed<VMClass>(api, VMClassKind, undefined),
    Promise.all(INFRA_MACHINE_KINDS.map((kind) => listIfAllowed<PlacedMachineObject>(api, kind, namespace))).then((lists) => lists.flat()),
  ]);
  return { providers, virtualMachines, vmClasses, machines };
}

/** The objects of `kind`, or none when the user may not list them. */
async function listIfAllowed<T>(api: KubeApi, kind: KindDefinition, namespace: NamespaceScope): Promise<T[]> {
  return list<T>(api, kind, namespace).catch((err: unknown) => {
    if (err instanceof ApiStatusError && err.code === 403) return [];
    throw err;
  });
}

/** The objects of `kind` (none when it is not served), asked again while a just-established kind's storage fills. */
async function list<T>(api: KubeApi, kind: KindDefinition, namespace: NamespaceScope): Promise<T[]> {
  const scope = kind.scope === 'Namespaced' && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const items = await listSoon<T>(api, `/apis/${apiVersionOf(kind)}${scope}/${kind.plural}`);
  // A list's items carry no kind: each gets its list's.
  return items.map((item) => ({ ...item, kind: kind.kind }));
}
