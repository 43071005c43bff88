// Which Secrets the hosts of one namespace may read (ADR 29): the user-data of
// the machines there still to be created, and nothing else. A machine reads its
// user-data only before its VM's first boot; once provisioned, or being
// deleted, it needs none, and its Secret leaves the list.
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { capiOwner } from '../owning-machine.js';
import { isProvisioned } from '../infra-machine/decide.js';

export interface UserDataReaders {
  /** Secrets named by spec.userDataSecretRef. */
  readonly named: readonly string[];
  /** CAPI-owned machines without that field: their Secret is the owning Machine's spec.bootstrap.dataSecretName. */
  readonly fromOwningMachine: readonly InfraMachine[];
}

export function machinesAwaitingUserData(machines: readonly InfraMachine[]): UserDataReaders {
  const named: string[] = [];
  const fromOwningMachine: InfraMachine[] = [];
  for (const machine of machines) {
    if (machine.metadata.deletionTimestamp || isProvisioned(machine)) continue;
    const ref = machine.spec.userDataSecretRef?.name;
    if (ref) named.push(ref);
    else if (capiOwner(machine)) fromOwningMachine.push(machine);
  }
  return { named, fromOwningMachine };
}
