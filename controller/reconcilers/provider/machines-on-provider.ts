// Which machines keep a Provider from going away (pure): the ones that may have
// a VM on it, so that deleting a Provider never strands VMs nothing can reach
// any more (docs/adr/0019-machines-stay-where-created.md).
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { mayHaveCreated } from '../infra-machine/decide.js';
import { resolveMachinePlacement } from '../infra-machine/placement.js';

/**
 * Whether `machine` (of this backend, still holding its finalizer) uses `provider`: its VM
 * was created there (status.placement); else it names it (spec.providerRef: it may be about
 * to create there); else, created by a version that kept no record, its failure domain
 * resolves there. A machine that names nothing and created nothing holds no Provider.
 */
export function isOnProvider(machine: InfraMachine, provider: Provider, backend: string, providers: readonly Provider[]): boolean {
  const name = provider.metadata.name;
  const recorded = machine.status?.placement?.provider;
  if (recorded !== undefined) return recorded === name;
  if (machine.spec.providerRef !== undefined) return machine.spec.providerRef.name === name;
  if (!mayHaveCreated(machine)) return false;
  const failureDomain = machine.spec.failureDomain;
  const placement = resolveMachinePlacement({ backend, namespace: machine.metadata.namespace ?? '', ...(failureDomain ? { failureDomain } : {}), providers });
  return placement.ok && placement.provider.metadata.name === name;
}
