// Gives a CAPI-owned infrastructure machine without a failure domain the
// least-used one of its cluster, before any provider creates the VM.
import type { InfraCluster } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { Label } from '../../../infra/api/well-known.js';
import type { Reconciler } from '../../runtime/controller.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import { Expectations, someFieldsOf } from '../../runtime/expectations.js';
import { keyOf, type Informer } from '../../runtime/informer.js';
import type { KubeApi, ObjectRef } from '../../runtime/kube-api.js';
import { capiOwner, getOwningMachine } from '../owning-machine.js';
import type { Logger } from '../../runtime/log.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import type { InfraMachine } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import type { ClusterFailureDomain } from '../../../infra/api/machine-fields.js';
import { decideMachineFailureDomain, type MachinePlacement } from './decide.js';

const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
const DEPLOYMENT_LABEL = 'cluster.x-k8s.io/deployment-name';

export class CapiMachinePlacementReconciler implements Reconciler {
  readonly name: string;
  /** Failure domains written and not yet shown by the cache: another event in between needs no second write, and peers count them. */
  private readonly placed = new Expectations(someFieldsOf<'spec', { failureDomain: string }>('spec'));

  constructor(
    readonly kind: string,
    private readonly machines: Informer<InfraMachine>,
    private readonly clusters: Informer<InfraCluster>,
    private readonly api: KubeApi,
    private readonly ssa: ServerSideApply,
  ) {
    this.name = `${kind.toLowerCase()}-placement`;
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const cached = this.machines.get(key);
    if (!cached) {
      this.placed.forget(key);
      return done;
    }
    const m = this.placed.observe(key, cached);
    const clusterName = awaitingFailureDomain(m);
    if (!clusterName) return done;
    // CAPI (or the user) chose a failure domain on the Machine: the provider uses that one. A Machine gone: nothing to place.
    const owning = await getOwningMachine(this.api, m);
    if (!owning || owning.spec?.failureDomain) return done;
    const failureDomains = clusterFailureDomains(this.clusters.list(m.metadata.namespace), clusterName);
    if (failureDomains.length === 0) return waiting(10_000);
    // From here to assume: no await, so concurrent reconciles see each other.
    const placement = decideMachineFailureDomain({
      failureDomains,
      controlPlane: m.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
      peers: this.peers(m).map((p) => this.placed.observe(keyOf(p), p).spec.failureDomain),
      ...(m.spec.providerRef ? { providerName: m.spec.providerRef.name } : {}),
    });
    if (!placement) return waiting(30_000);
    this.placed.expect(key, m, { failureDomain: placement.failureDomain });
    log.info({ failureDomain: placement.failureDomain }, 'Placing CAPI machine');
    try {
      await this.ssa.apply(toPlacementApply(m, placement));
    } catch (err) {
      this.placed.forget(key);
      throw err;
    }
    return done;
  }

  /** The cluster's other machines of the same group: one MachineDeployment, or the control plane. */
  private peers(m: InfraMachine): InfraMachine[] {
    const labels = m.metadata.labels ?? {};
    const group = (o: InfraMachine): string | undefined =>
      o.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined ? 'control-plane' : o.metadata.labels?.[DEPLOYMENT_LABEL];
    return this.machines
      .list(m.metadata.namespace)
      .filter(
        (o) => o.metadata.name !== m.metadata.name && o.metadata.labels?.[Label.capiClusterName] === labels[Label.capiClusterName] && group(o) === group(m),
      );
  }
}

/**
 * The CAPI Cluster's name of a machine to place: CAPI-owned, in a cluster, with no failure domain
 * yet and not being deleted; undefined for any other machine.
 */
function awaitingFailureDomain(m: InfraMachine): string | undefined {
  const clusterName = m.metadata.labels?.[Label.capiClusterName];
  if (!capiOwner(m) || !clusterName || m.spec.failureDomain || m.metadata.deletionTimestamp) return undefined;
  return clusterName;
}

/** The failure domains the InfraCluster of CAPI Cluster `clusterName` publishes; none while it has not published any. */
function clusterFailureDomains(clusters: readonly InfraCluster[], clusterName: string): readonly ClusterFailureDomain[] {
  const cluster = clusters.find((c) => c.metadata.ownerReferences?.some((r) => r.kind === 'Cluster' && r.name === clusterName));
  return cluster?.status?.failureDomains ?? [];
}

/** The apply that gives `m` its failure domain, and the Provider publishing it unless spec.providerRef is set. */
function toPlacementApply(m: InfraMachine, placement: MachinePlacement): ObjectRef & { spec: object } {
  return {
    apiVersion: m.apiVersion,
    kind: m.kind,
    // The uid makes the apply fail rather than recreate a machine deleted meanwhile.
    metadata: { name: m.metadata.name ?? '', namespace: m.metadata.namespace ?? '', ...(m.metadata.uid ? { uid: m.metadata.uid } : {}) },
    spec: {
      failureDomain: placement.failureDomain,
      ...(m.spec.providerRef || !placement.providerName ? {} : { providerRef: { name: placement.providerName } }),
    },
  };
}
