// InfraClusters (all four kinds, one reconciler): publish the failure domains
// of the selected Providers for CAPI. Reads caches, writes only status.
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { InfraCluster } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-cluster.js';
import { done, waiting, type ReconcileResult } from '../../runtime/errors.js';
import type { KubeApi } from '../../runtime/kube-api.js';
import { owningClusterName, pausedOwningCluster } from '../owning-cluster.js';
import type { Informer } from '../../runtime/informer.js';
import type { Logger } from '../../runtime/log.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { ServerSideApply } from '../../runtime/server-side-apply.js';
import { applyStatus } from '../../runtime/status-writer.js';
import type { Clock } from '../../runtime/clock.js';
import { decideInfraClusterStatus } from './decide.js';

const CLUSTER_RECHECK_MS = 30_000;

export class InfraClusterReconciler implements Reconciler {
  readonly name: string;

  /**
   * @param kind the InfraCluster kind, e.g. VSphereCluster.
   * @param backend its backend, e.g. vsphere: the Providers it aggregates are of this class only.
   */
  constructor(
    readonly kind: string,
    private readonly backend: string,
    private readonly clusters: Informer<InfraCluster>,
    private readonly providers: Informer<Provider>,
    private readonly api: KubeApi,
    private readonly ssa: ServerSideApply,
    private readonly clock: Clock,
  ) {
    this.name = kind.toLowerCase();
  }

  async reconcile(key: string, log: Logger): Promise<ReconcileResult> {
    const cluster = this.clusters.get(key);
    if (!cluster) return done;
    const pausedCluster = await pausedOwningCluster(this.api, cluster);
    const status = decideInfraClusterStatus(cluster, this.backend, this.providers.list(cluster.metadata.namespace), this.clock.now(), pausedCluster);
    if (await applyStatus(this.ssa, cluster, status as Record<string, unknown>)) {
      log.info({ failureDomains: status.failureDomains?.length ?? 0 }, 'Updated cluster status');
    }
    // Clusters are not watched (Cluster API may not even be installed): a CAPI-owned
    // InfraCluster looks at its Cluster's spec.paused again this often.
    return owningClusterName(cluster) !== undefined ? waiting(CLUSTER_RECHECK_MS) : done;
  }
}
