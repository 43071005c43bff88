// The host-reads Role of each namespace (one per backend whose provider runs on
// its hosts): its rules grant `get` on exactly the Secrets that namespace's
// machines still to be created name, so a host's identity reads those and no
// other Secret (ADR 29). `banlieue host install` makes the Role; a namespace
// without one has no host, and nothing is written there. Keys are
// `<namespace>/<role name>`.
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import { hostReadsRoleName, hostReadsRules, type PolicyRule } from '../../../infra/install/rbac-rules.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { Informer } from '../../runtime/informer.js';
import { ApiStatusError, type KubeApi } from '../../runtime/kube-api.js';
import type { Logger } from '../../runtime/log.js';
import { getOwningMachine } from '../owning-machine.js';
import { machinesAwaitingUserData } from './decide.js';

/** How soon to look again while a CAPI Machine has no bootstrap Secret yet (the controller does not watch Machines). */
const BOOTSTRAP_RECHECK_MS = 5_000;

interface Role {
  readonly rules?: PolicyRule[] | null;
}

export class HostReadsReconciler implements Reconciler {
  readonly name: string;
  readonly kind = 'Role';
  readonly roleName: string;

  constructor(
    backend: string,
    private readonly machines: Informer<InfraMachine>,
    private readonly api: KubeApi,
  ) {
    this.roleName = hostReadsRoleName(backend);
    this.name = `${backend}-host-reads`;
  }

  /** The key of the Role of `machine`'s namespace. */
  keyOf(machine: InfraMachine): string {
    return `${machine.metadata.namespace ?? ''}/${this.roleName}`;
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const namespace = key.slice(0, key.indexOf('/'));
    const path = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles/${this.roleName}`;
    let role: Role;
    try {
      role = await this.api.request<Role>('GET', path);
    } catch (err) {
      if (err instanceof ApiStatusError && err.code === 404) return done;
      throw err;
    }
    const { names, waitingForBootstrap } = await this.secretNames(namespace);
    const rules = hostReadsRules(names);
    if (JSON.stringify(role.rules ?? []) !== JSON.stringify(rules)) {
      await this.api.request('PATCH', path, { body: { rules }, contentType: 'application/merge-patch+json' });
      log.info({ secrets: rules[0]?.resourceNames?.length ?? 0 }, 'Updated the Secrets hosts may read');
    }
    return waitingForBootstrap ? waiting(BOOTSTRAP_RECHECK_MS) : done;
  }

  private async secretNames(namespace: string): Promise<{ names: string[]; waitingForBootstrap: boolean }> {
    const { named, fromOwningMachine } = machinesAwaitingUserData(this.machines.list(namespace));
    const names = [...named];
    let waitingForBootstrap = false;
    for (const machine of fromOwningMachine) {
      // Only a Machine that names this machine back counts (owning-machine.ts).
      const name = (await getOwningMachine(this.api, machine))?.spec?.bootstrap?.dataSecretName;
      if (name) names.push(name);
      else waitingForBootstrap = true;
    }
    return { names, waitingForBootstrap };
  }
}
