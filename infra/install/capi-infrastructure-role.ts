import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { Label } from '../api/well-known.js';
import { clusterScoped } from './cluster-scoped.js';
import { componentLabels } from './labels.js';
import { capiInfrastructureRules } from './rbac-rules.js';

export const CAPI_INFRASTRUCTURE_ROLE = 'banlieue-capi-infrastructure';

/**
 * What CAPI's manager may do to our infrastructure kinds. The label makes
 * CAPI's aggregated manager ClusterRole pick it up (cdk8s-plus
 * `aggregationLabels` builds an aggregationRule instead, so it is not used).
 */
export class CapiInfrastructureRole extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    clusterScoped(
      new kplus.k8s.KubeClusterRole(this, 'cluster-role', {
        metadata: {
          name: CAPI_INFRASTRUCTURE_ROLE,
          labels: { ...componentLabels('capi-infrastructure'), [Label.capiAggregateToManager]: 'true' },
        },
        rules: capiInfrastructureRules(),
      }),
    );
  }
}
