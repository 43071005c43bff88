// A provider role that runs on its hosts (Cloud Hypervisor) gets no Deployment
// and no shared identity in the cluster install: one ServiceAccount whose token
// sat on every host would let any one host drive every host's machines. The
// install ships the permissions as two ClusterRoles, bound to nobody; each host
// gets its own ServiceAccount, bound in its Provider's namespace and allowed to
// write its own Provider's status only, from `banlieue host install` (docs/adr/0017).
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { type BackendName } from '../api/backends.js';
import { clusterScoped } from './cluster-scoped.js';
import { componentLabels } from './labels.js';
import { hostProviderRules } from './rbac-rules.js';

export interface HostRoleRulesProps {
  readonly backend: BackendName;
}

/** `banlieue-provider-<backend>` (namespaced rules, bound per host by a RoleBinding) and `…-images` (cluster-scoped, by a ClusterRoleBinding). */
export class HostRoleRules extends Construct {
  static namesOf(backend: BackendName): { readonly namespaced: string; readonly cluster: string } {
    return { namespaced: `banlieue-provider-${backend}`, cluster: `banlieue-provider-${backend}-images` };
  }

  constructor(scope: Construct, id: string, props: HostRoleRulesProps) {
    super(scope, id);
    const labels = componentLabels(`provider-${props.backend}`);
    const names = HostRoleRules.namesOf(props.backend);
    const rules = hostProviderRules(props.backend);
    clusterScoped(new kplus.k8s.KubeClusterRole(this, 'namespaced', { metadata: { name: names.namespaced, labels }, rules: rules.namespaced }));
    clusterScoped(new kplus.k8s.KubeClusterRole(this, 'cluster', { metadata: { name: names.cluster, labels }, rules: rules.cluster }));
  }
}
