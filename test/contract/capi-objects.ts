// The Cluster API objects the contract e2e applies, authored with the constructs
// `make imports` generates from CAPI's own v1beta2 CRDs (imports/): a field or
// a value CAPI's schema does not have fails to compile. For authoring only:
// what the API server answers is read as plain JSON with wire names (DESIGN §2).
import { Chart, type ApiObject } from 'cdk8s';
import { Cluster } from '../../imports/cluster.x-k8s.io-cluster.js';
import { Machine } from '../../imports/cluster.x-k8s.io-machine.js';
import { MachineDeployment } from '../../imports/cluster.x-k8s.io-machinedeployment.js';
import { INFRA_GROUP } from '../../infra/api/kind.js';
import { testApp } from '../support/chart-app.js';

/** An object as `kubectl apply` takes it. */
export type Manifest = Record<string, unknown>;

/** The Kubernetes version the Machines ask for (nothing runs it: there is no bootstrap provider). */
const KUBERNETES_VERSION = 'v1.35.4';

/** Renders one construct, alone in its own Chart (so ids never collide), to the JSON the API server takes. */
function render(define: (chart: Chart) => ApiObject): Manifest {
  return define(new Chart(testApp(), 'capi')).toJson() as Manifest;
}

/** Cluster `ns/name` on the InfraCluster `infraKind` (of `infraGroup`, banlieue's by default) of the same name. */
export function capiCluster(ns: string, name: string, infraKind: string, infraGroup = INFRA_GROUP): Manifest {
  return render(
    (chart) =>
      new Cluster(chart, name, {
        metadata: { name, namespace: ns },
        spec: { infrastructureRef: { apiGroup: infraGroup, kind: infraKind, name } },
      }),
  );
}

export interface CapiMachineProps {
  readonly cluster: string;
  /** Kind of the InfraMachine of the same name the Machine adopts. */
  readonly infraKind: string;
  readonly failureDomain: string;
  /** Labels its author sets (CAPI's defaulting webhook adds the cluster-name label). @default none */
  readonly labels?: Record<string, string>;
}

/**
 * Machine `ns/name` of `props.cluster`, on the InfraMachine of the same name,
 * bootstrap Secret `<name>-bootstrap`. As a user writes it: CAPI's defaulting
 * webhook adds the cluster-name label.
 */
export function capiMachine(ns: string, name: string, props: CapiMachineProps): Manifest {
  return render(
    (chart) =>
      new Machine(chart, name, {
        metadata: { name, namespace: ns, ...(props.labels ? { labels: props.labels } : {}) },
        spec: {
          clusterName: props.cluster,
          version: KUBERNETES_VERSION,
          failureDomain: props.failureDomain,
          bootstrap: { dataSecretName: `${name}-bootstrap` },
          infrastructureRef: { apiGroup: INFRA_GROUP, kind: props.infraKind, name },
        },
      }),
  );
}

/**
 * MachineDeployment `workers` of `cluster`: `replicas` Machines from the
 * InfraMachineTemplate `workers` (of `infraGroup`, banlieue's by default),
 * bootstrap Secret `workers-bootstrap`. As a
 * user writes it: CAPI's defaulting webhook fills in the selector and the
 * template's labels (deployment-name and cluster-name), the cluster-name label
 * and the rolling-update strategy.
 */
export function workersDeployment(ns: string, cluster: string, replicas: number, templateKind: string, infraGroup = INFRA_GROUP): Manifest {
  return render(
    (chart) =>
      new MachineDeployment(chart, 'workers', {
        metadata: { name: 'workers', namespace: ns },
        spec: {
          clusterName: cluster,
          replicas,
          selector: {},
          template: {
            spec: {
              clusterName: cluster,
              version: KUBERNETES_VERSION,
              bootstrap: { dataSecretName: 'workers-bootstrap' },
              infrastructureRef: { apiGroup: infraGroup, kind: templateKind, name: 'workers' },
            },
          },
        },
      }),
  );
}
