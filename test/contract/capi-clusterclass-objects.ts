// The ClusterClass and the topology Cluster the ClusterClass e2e applies,
// authored with the constructs generated from CAPI's own v1beta2 CRDs
// (imports/), as capi-objects.ts does: a field CAPI does not have fails to compile.
import { Chart, type ApiObject } from 'cdk8s';
import { Cluster } from '../../imports/cluster.x-k8s.io-cluster.js';
import {
  ClusterClass,
  ClusterClassSpecPatchesDefinitionsJsonPatchesOp as PatchOp,
  ClusterClassSpecVariablesSchemaOpenApiv3SchemaType as SchemaType,
  ClusterClassSpecWorkersMachineDeploymentsRolloutStrategyRollingUpdateMaxSurge as MaxSurge,
  ClusterClassSpecWorkersMachineDeploymentsRolloutStrategyRollingUpdateMaxUnavailable as MaxUnavailable,
  ClusterClassSpecWorkersMachineDeploymentsRolloutStrategyType as RolloutStrategyType,
} from '../../imports/cluster.x-k8s.io-clusterclass.js';
import type { BackendApi } from '../../infra/api/backends.js';
import { apiVersionOf } from '../../infra/api/kind.js';
import type { Manifest } from './capi-objects.js';
import { BOOTSTRAP_API, CONTROL_PLANE_API } from './played-providers.js';
import { testApp } from '../support/chart-app.js';

function render(define: (chart: Chart) => ApiObject): Manifest {
  return define(new Chart(testApp(), 'capi')).toJson() as Manifest;
}

export interface TopologyClassProps {
  /** The backend whose ClusterTemplate and MachineTemplate kinds the class uses. */
  readonly backend: BackendApi;
  /** The backend's ClusterTemplate of the class. */
  readonly clusterTemplate: string;
  /** The TestControlPlaneTemplate of the class (played control plane, no Machines). */
  readonly controlPlaneTemplate: string;
  /** The TestBootstrapConfigTemplate of the worker class. */
  readonly bootstrapTemplate: string;
  /** The backend's MachineTemplate of the worker class: a new name rolls every MachineDeployment of the class. */
  readonly workerTemplate: string;
  /** How many Machines of a MachineDeployment may be missing during a rollout. */
  readonly maxUnavailable: number;
}

/**
 * ClusterClass `ns/name` over the templates of `props.backend`, with worker
 * class `worker` and, as the `clusterclass` flavor, the endpoint as the
 * variable `controlPlaneEndpoint` patched into the InfraCluster.
 */
export function topologyClass(ns: string, name: string, props: TopologyClassProps): Manifest {
  const infraApi = apiVersionOf(props.backend.clusterTemplate);
  const clusterTemplateKind = props.backend.clusterTemplate.kind;
  return render(
    (chart) =>
      new ClusterClass(chart, name, {
        metadata: { name, namespace: ns },
        spec: {
          infrastructure: { templateRef: { apiVersion: infraApi, kind: clusterTemplateKind, name: props.clusterTemplate } },
          controlPlane: { templateRef: { apiVersion: CONTROL_PLANE_API, kind: 'TestControlPlaneTemplate', name: props.controlPlaneTemplate } },
          workers: {
            machineDeployments: [
              {
                class: 'worker',
                bootstrap: { templateRef: { apiVersion: BOOTSTRAP_API, kind: 'TestBootstrapConfigTemplate', name: props.bootstrapTemplate } },
                infrastructure: { templateRef: { apiVersion: infraApi, kind: props.backend.machineTemplate.kind, name: props.workerTemplate } },
                // No surge: old Machines go first, new ones replace them.
                rollout: {
                  strategy: {
                    type: RolloutStrategyType.ROLLING_UPDATE,
                    rollingUpdate: { maxSurge: MaxSurge.fromNumber(0), maxUnavailable: MaxUnavailable.fromNumber(props.maxUnavailable) },
                  },
                },
              },
            ],
          },
          variables: [
            {
              name: 'controlPlaneEndpoint',
              required: true,
              schema: {
                openApiv3Schema: {
                  type: SchemaType.OBJECT,
                  required: ['host', 'port'],
                  properties: { host: { type: 'string', minLength: 1 }, port: { type: 'integer', minimum: 1, maximum: 65535 } },
                },
              },
            },
          ],
          patches: [
            {
              name: 'control-plane-endpoint',
              definitions: [
                {
                  selector: { apiVersion: infraApi, kind: clusterTemplateKind, matchResources: { infrastructureCluster: true } },
                  jsonPatches: [{ op: PatchOp.ADD, path: '/spec/template/spec/controlPlaneEndpoint', valueFrom: { variable: 'controlPlaneEndpoint' } }],
                },
              ],
            },
          ],
        },
      }),
  );
}

export interface TopologyClusterProps {
  readonly className: string;
  readonly version: string;
  readonly workers: number;
  readonly endpoint: { readonly host: string; readonly port: number };
}

/** Cluster `ns/name` of the class `props.className`, with one MachineDeployment `md-0` of class `worker`. */
export function topologyCluster(ns: string, name: string, props: TopologyClusterProps): Manifest {
  return render(
    (chart) =>
      new Cluster(chart, name, {
        metadata: { name, namespace: ns },
        spec: {
          topology: {
            classRef: { name: props.className },
            version: props.version,
            workers: { machineDeployments: [{ class: 'worker', name: 'md-0', replicas: props.workers }] },
            variables: [{ name: 'controlPlaneEndpoint', value: props.endpoint }],
          },
        },
      }),
  );
}
