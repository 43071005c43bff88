// The steps of each CAPI Machine of a bench namespace, timed as the watch sees
// them: the Machine, its InfraMachine (CAPI names it after the Machine), the
// providerID on it, it provisioned, and the Machine provisioned with a
// providerID and an address (the clock's end for that Machine).
import { Informer, type KubeObject } from '../../controller/runtime/informer.js';
import type { KubeApi } from '../../controller/runtime/kube-api.js';
import { silentLogger } from '../../controller/runtime/log.js';

/** When the bench first saw each step of one Machine, in performance.now() ms. */
export interface MachineProgress {
  machineAt: number;
  infraAt?: number;
  /** Its VM listed in vcsim (the harness plays Tools then). */
  cloneSeenAt?: number;
  providerIdAt?: number;
  /** Its InfraMachine says status.initialization.provisioned. */
  infraProvisionedAt?: number;
  /** The Machine has its providerID, infrastructureProvisioned and an address. */
  doneAt?: number;
}

interface Watched extends KubeObject {
  readonly spec?: { readonly providerID?: unknown };
  readonly status?: {
    readonly initialization?: { readonly provisioned?: unknown; readonly infrastructureProvisioned?: unknown };
    readonly addresses?: readonly unknown[];
  };
}

export interface MachineWatch {
  /** By Machine name; filled as events arrive. */
  readonly progress: Map<string, MachineProgress>;
  stop(): void;
}

/** Watches the Machines and the VSphereMachines (of `infraApiVersion`, CAPV's or banlieue's) of `ns`, once both are synced. */
export async function watchMachines(api: KubeApi, ns: string, infraApiVersion: string): Promise<MachineWatch> {
  const progress = new Map<string, MachineProgress>();
  const stopping = new AbortController();
  const machines = new Informer<Watched>(api, { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', namespace: ns, log: silentLogger() });
  const infra = new Informer<Watched>(api, { apiVersion: infraApiVersion, kind: 'VSphereMachine', namespace: ns, log: silentLogger() });
  const seeMachine = (m: Watched): void => {
    const now = performance.now();
    const p = progress.get(m.metadata.name ?? '') ?? { machineAt: now };
    progress.set(m.metadata.name ?? '', p);
    const provisioned = m.status?.initialization?.infrastructureProvisioned === true;
    if (provisioned && typeof m.spec?.providerID === 'string' && (m.status?.addresses?.length ?? 0) > 0) p.doneAt ??= now;
  };
  const seeInfra = (m: Watched): void => {
    const now = performance.now();
    // An InfraMachine may be seen before its Machine: the Machine's step is then no later than this.
    const p = progress.get(m.metadata.name ?? '') ?? { machineAt: now };
    progress.set(m.metadata.name ?? '', p);
    p.infraAt ??= now;
    if (typeof m.spec?.providerID === 'string') p.providerIdAt ??= now;
    if (m.status?.initialization?.provisioned === true) p.infraProvisionedAt ??= now;
  };
  machines.on('add', seeMachine).on('update', seeMachine);
  infra.on('add', seeInfra).on('update', seeInfra);
  for (const informer of [machines, infra]) void informer.run(stopping.signal);
  await Promise.all([machines.waitForSync(), infra.waitForSync()]);
  return { progress, stop: () => stopping.abort() };
}
