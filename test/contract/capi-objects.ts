// The Cluster API objects the contract e2e applies, authored with the constructs
// `make imports` generates from CAPI's own v1beta2 CRDs (imports/): a field or
// a value CAPI's schema does not have fails to compile. For authoring only:
// what the API server answers is read as plain JSON with wire names (DESIGN §2).
import { Chart, Testing, type ApiObject } from 'cdk8s';
import { Cluster } from '../../imports/cluster.x-k8s.io-cluster.js';
import { Machine } from '../../imports/cluster.x-k8s.io-machine.js';
import {
  MachineDeployment,
  MachineDeploymentSpecRolloutStrategyRollingUpdateMaxSurge as MaxSurge,
  MachineDeploymentSpecRolloutStrategyRollingUpdateMaxUnavailable as MaxUnavailable,
  MachineDeploymentSpecRolloutStrategyType as RolloutStrategyType,
} from '../../imports/cluster.x-k8s.io-machinedeployment.js';
import { INFRA_GROUP } from '../../infra/api/kind.js';
import { Label } from '../../infra/api/well-known.js';

/** An object as `kubectl apply` takes it. */
export type Manifest = Record<string, unknown>;

/** The Kubernetes version the Machines ask for (nothing runs it: there is no bootstrap provider). */
const KUBERNETES_VERSION = 'v1.35.4';

/** Renders one construct, alone in its own Chart (so ids never collide), to the JSON the API server takes. */
function render(define: (chart: Chart) => ApiObject): Manifest {
  return define(new Chart(Testing.app(), 'capi')).toJson() as Manifest;
}

/** Cluster `ns/name` on the InfraCluster `infraKind` of the same name. */
export function capiCluster(ns: string, name: string, infraKind: string): Manifest {
  return render((chart) => new Cluster(chart, name, {
    metadata: { name, namespace: ns },
    spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: infraKind, name } },
  }));
}

export interface CapiMachineProps {
  readonly cluster: string;
  /** Kind of the InfraMachine of the same name the Machine adopts. */
  readonly infraKind: string;
  readonly failureDomain: string;
}

/** Machine `ns/name` of `props.cluster`, on the InfraMachine of the same name, bootstrap Secret `<name>-bootstrap`. */
export function capiMachine(ns: string, name: string, props: CapiMachineProps): Manifest {
  return render((chart) => new Machine(chart, name, {
    metadata: { name, namespace: ns, labels: { [Label.capiClusterName]: props.cluster } },
    spec: {
      clusterName: props.cluster,
      version: KUBERNETES_VERSION,
      failureDomain: props.failureDomain,
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: INFRA_GROUP, kind: props.infraKind, name },
    },
  }));
}

/** MachineDeployment `workers` of `cluster`: `replicas` Machines from the InfraMachineTemplate `workers`, bootstrap Secret `workers-bootstrap`. */
export function workersDeployment(ns: string, cluster: string, replicas: number, templateKind: string): Manifest {
  const labels = { [Label.capiClusterName]: cluster, 'cluster.x-k8s.io/deployment-name': 'workers' };
  return render((chart) => new MachineDeployment(chart, 'workers', {
    metadata: { name: 'workers', namespace: ns, labels: { [Label.capiClusterName]: cluster } },
    spec: {
      clusterName: cluster,
      replicas,
      // What CAPI's defaulting webhook would set; webhooks are not served here.
      rollout: { strategy: { type: RolloutStrategyType.ROLLING_UPDATE, rollingUpdate: { maxSurge: MaxSurge.fromNumber(1), maxUnavailable: MaxUnavailable.fromNumber(0) } } },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: { clusterName: cluster, version: KUBERNETES_VERSION, bootstrap: { dataSecretName: 'workers-bootstrap' }, infrastructureRef: { apiGroup: INFRA_GROUP, kind: templateKind, name: 'workers' } },
      },
    },
  }));
}
