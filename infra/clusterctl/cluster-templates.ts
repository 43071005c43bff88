// The cluster templates `clusterctl generate cluster --infrastructure
// banlieue[:flavor]` reads from a release: one flavor per backend whose API
// entry has one (its `clusterctl`; the table is flavor-table.ts), each a Cluster
// on that backend's InfraCluster, a KubeadmControlPlane and a MachineDeployment
// of workers, and the `clusterclass` flavor's ClusterClass and Cluster; their
// variables are in flavor-variables.ts. Authored with banlieue's typed
// constructs and the ones `make imports` generates from CAPI's own v1beta2
// CRDs (imports/).
// Not part of the npm package (tsconfig.build.json leaves it out: imports/ is
// not compiled into lib/); `make clusterctl-components` writes the assets.
import { App, Chart, type ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { KubeadmConfigTemplate } from '../../imports/bootstrap.cluster.x-k8s.io-kubeadmconfigtemplate.js';
import { Cluster } from '../../imports/cluster.x-k8s.io-cluster.js';
import {
  ClusterClass,
  ClusterClassSpecPatchesDefinitionsJsonPatchesOp as PatchOp,
  ClusterClassSpecVariablesSchemaOpenApiv3SchemaType as SchemaType,
  type ClusterClassSpec,
} from '../../imports/cluster.x-k8s.io-clusterclass.js';
import { MachineDeployment } from '../../imports/cluster.x-k8s.io-machinedeployment.js';
import { KubeadmControlPlane } from '../../imports/controlplane.cluster.x-k8s.io-kubeadmcontrolplane.js';
import { KubeadmControlPlaneTemplate } from '../../imports/controlplane.cluster.x-k8s.io-kubeadmcontrolplanetemplate.js';
import { API_VERSION, INFRA_GROUP, type KindDefinition } from '../api/kind.js';
import { Label } from '../api/well-known.js';
import { defineConstruct, type BanlieueConstructClass } from '../authoring/banlieue-api-object.js';
import type { MachineShape } from './flavor.js';
import {
  backendOf,
  CLUSTER_CLASS_BACKEND,
  CLUSTER_CLASS_NAME,
  CLUSTERCLASS_FLAVOR,
  clusterClassFileName,
  templateFileName,
  type FlavoredBackend,
} from './flavor-table.js';
import {
  CLUSTER_NAME,
  CONTROL_PLANE_ENDPOINT_IP,
  CONTROL_PLANE_ENDPOINT_PORT,
  CONTROL_PLANE_MACHINE_COUNT,
  CONTROL_PLANE_MACHINE_CPUS,
  CONTROL_PLANE_MACHINE_MEMORY_MIB,
  KUBERNETES_VERSION,
  MACHINE_OS_DISK_SIZE_GIB,
  NAMESPACE,
  WORKER_MACHINE_COUNT,
  WORKER_MACHINE_CPUS,
  WORKER_MACHINE_MEMORY_MIB,
} from './flavor-variables.js';
import { PlaceholderResolver, templateYaml, ValueResolver, type TemplateVariable, type VariableResolver } from './template-variables.js';

// The flavor table's answers, with the templates that read them.
export { CLUSTER_CLASS_NAME, CLUSTERCLASS_FLAVOR, clusterClassFileName, FLAVORS, flavorBackend, RENDERABLE_FLAVORS, templateFileName } from './flavor-table.js';

const constructs = new Map<KindDefinition, BanlieueConstructClass<unknown>>();
/** The typed construct of a backend kind, made once. */
function constructOf(kind: KindDefinition): BanlieueConstructClass<unknown> {
  const known = constructs.get(kind) ?? defineConstruct(kind);
  constructs.set(kind, known);
  return known;
}

function infraCluster(
  scope: Construct,
  id: string,
  backend: FlavoredBackend,
  metadata: { name: string; namespace: string },
  endpoint: { host: string; port: number },
): ApiObject {
  return new (constructOf(backend.api.cluster))(scope, id, { metadata, spec: { controlPlaneEndpoint: endpoint } });
}

function machineTemplate(
  scope: Construct,
  id: string,
  backend: FlavoredBackend,
  metadata: { name: string; namespace: string },
  shape: MachineShape,
  v: VariableResolver,
): ApiObject {
  return new (constructOf(backend.api.machineTemplate))(scope, id, { metadata, spec: { template: { spec: backend.clusterctl.machineSpec(shape, v) } } });
}

// The node's name and its providerID come from the datasource banlieue fills
// for every backend (meta-data `local-hostname` and `provider-id`; cloud-init's
// Jinja reads `provider-id` as `provider_id`). CABPK writes Jinja cloud-init.
const NODE_NAME = '{{ local_hostname }}';
const KUBELET_ARGS = [{ name: 'provider-id', value: '{{ ds.meta_data.provider_id }}' }];

const KUBEADM_BOOTSTRAP_GROUP = 'bootstrap.cluster.x-k8s.io';
const KUBEADM_CONTROL_PLANE_GROUP = 'controlplane.cluster.x-k8s.io';

/** A backend flavor's objects in a Chart of their own, every variable read through `v`. */
export class BanlieueClusterTemplate extends Chart {
  constructor(scope: Construct, id: string, flavor: string, v: VariableResolver) {
    super(scope, id);
    const backend = backendOf(flavor);
    const name = v.str(CLUSTER_NAME);
    const namespace = v.str(NAMESPACE);
    const version = v.str(KUBERNETES_VERSION);
    const meta = (suffix: string): { name: string; namespace: string } => ({ name: `${name}${suffix}`, namespace });
    const controlPlane = meta('-control-plane');
    const workers = meta('-md-0');

    new Cluster(this, 'cluster', {
      metadata: meta(''),
      spec: {
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.api.cluster.kind, name },
        controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: controlPlane.name },
      },
    });
    infraCluster(this, 'infra-cluster', backend, meta(''), { host: v.str(CONTROL_PLANE_ENDPOINT_IP), port: v.int(CONTROL_PLANE_ENDPOINT_PORT) });
    const osDiskGiB = v.int(MACHINE_OS_DISK_SIZE_GIB);
    machineTemplate(
      this,
      'control-plane-template',
      backend,
      controlPlane,
      { cpus: v.int(CONTROL_PLANE_MACHINE_CPUS), memoryMiB: v.int(CONTROL_PLANE_MACHINE_MEMORY_MIB), osDiskGiB },
      v,
    );
    new KubeadmControlPlane(this, 'control-plane', {
      metadata: controlPlane,
      spec: {
        replicas: v.int(CONTROL_PLANE_MACHINE_COUNT),
        version,
        machineTemplate: { spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.api.machineTemplate.kind, name: controlPlane.name } } },
        kubeadmConfigSpec: {
          initConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
          joinConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
        },
      },
    });

    machineTemplate(this, 'worker-template', backend, workers, { cpus: v.int(WORKER_MACHINE_CPUS), memoryMiB: v.int(WORKER_MACHINE_MEMORY_MIB), osDiskGiB }, v);
    new KubeadmConfigTemplate(this, 'worker-bootstrap', {
      metadata: workers,
      spec: { template: { spec: { joinConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } } } } },
    });
    const labels = { [Label.capiClusterName]: name, 'cluster.x-k8s.io/deployment-name': workers.name };
    new MachineDeployment(this, 'workers', {
      metadata: { ...workers, labels: { [Label.capiClusterName]: name } },
      spec: {
        clusterName: name,
        replicas: v.int(WORKER_MACHINE_COUNT),
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            clusterName: name,
            version,
            bootstrap: { configRef: { apiGroup: 'bootstrap.cluster.x-k8s.io', kind: 'KubeadmConfigTemplate', name: workers.name } },
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.api.machineTemplate.kind, name: workers.name },
          },
        },
      },
    });
  }
}

/**
 * The ClusterClass over the default flavor backend's InfraClusterTemplate and
 * machine template, a KubeadmControlPlaneTemplate and a KubeadmConfigTemplate. The endpoint differs per
 * Cluster, so it is a class variable patched into the InfraClusterTemplate,
 * not a template value. To change machines later, create new templates and
 * point the class at them: template specs are immutable (CAPI then rolls the
 * MachineDeployments).
 */
export class BanlieueClusterClass extends Chart {
  constructor(scope: Construct, id: string, v: VariableResolver) {
    super(scope, id);
    const backend = CLUSTER_CLASS_BACKEND;
    const namespace = v.str(NAMESPACE);
    const className = CLUSTER_CLASS_NAME;
    const classMeta = (suffix: string): { name: string; namespace: string } => ({ name: `${className}${suffix}`, namespace });
    const ref = (group: string, kind: string, objectName: string): { apiVersion: string; kind: string; name: string } => ({
      apiVersion: `${group}/${group === INFRA_GROUP ? API_VERSION : 'v1beta2'}`,
      kind,
      name: objectName,
    });
    const controlPlane = classMeta('-control-plane');
    const worker = classMeta('-worker');
    const osDiskGiB = v.int(MACHINE_OS_DISK_SIZE_GIB);

    new ClusterClass(this, 'class', {
      metadata: classMeta(''),
      spec: {
        infrastructure: { templateRef: ref(INFRA_GROUP, backend.api.clusterTemplate.kind, className) },
        controlPlane: {
          templateRef: ref(KUBEADM_CONTROL_PLANE_GROUP, 'KubeadmControlPlaneTemplate', controlPlane.name),
          machineInfrastructure: { templateRef: ref(INFRA_GROUP, backend.api.machineTemplate.kind, controlPlane.name) },
        },
        workers: {
          machineDeployments: [
            {
              class: 'worker',
              bootstrap: { templateRef: ref(KUBEADM_BOOTSTRAP_GROUP, 'KubeadmConfigTemplate', worker.name) },
              infrastructure: { templateRef: ref(INFRA_GROUP, backend.api.machineTemplate.kind, worker.name) },
            },
          ],
        },
        ...controlPlaneEndpoint(backend.api.clusterTemplate.kind),
      },
    });
    new (constructOf(backend.api.clusterTemplate))(this, 'infra-cluster-template', { metadata: classMeta(''), spec: { template: { spec: {} } } });
    machineTemplate(
      this,
      'control-plane-template',
      backend,
      controlPlane,
      { cpus: v.int(CONTROL_PLANE_MACHINE_CPUS), memoryMiB: v.int(CONTROL_PLANE_MACHINE_MEMORY_MIB), osDiskGiB },
      v,
    );
    new KubeadmControlPlaneTemplate(this, 'kubeadm-control-plane-template', {
      metadata: controlPlane,
      spec: {
        template: {
          spec: {
            kubeadmConfigSpec: {
              initConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
              joinConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
            },
          },
        },
      },
    });
    machineTemplate(this, 'worker-template', backend, worker, { cpus: v.int(WORKER_MACHINE_CPUS), memoryMiB: v.int(WORKER_MACHINE_MEMORY_MIB), osDiskGiB }, v);
    new KubeadmConfigTemplate(this, 'worker-bootstrap', {
      metadata: worker,
      spec: { template: { spec: { joinConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } } } } },
    });
  }
}

/** The class variable `controlPlaneEndpoint`, and the patch that writes it into the InfraClusterTemplate of `kind`. */
function controlPlaneEndpoint(kind: string): Pick<ClusterClassSpec, 'variables' | 'patches'> {
  return {
    variables: [
      {
        name: 'controlPlaneEndpoint',
        required: true,
        schema: {
          openApiv3Schema: {
            type: SchemaType.OBJECT,
            description: 'Address of the API server (a VIP or load balancer you provide).',
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
            selector: {
              apiVersion: `${INFRA_GROUP}/${API_VERSION}`,
              kind,
              matchResources: { infrastructureCluster: true },
            },
            jsonPatches: [{ op: PatchOp.ADD, path: '/spec/template/spec/controlPlaneEndpoint', valueFrom: { variable: 'controlPlaneEndpoint' } }],
          },
        ],
      },
    ],
  };
}

/** The `clusterclass` flavor: a Cluster of BanlieueClusterClass, its version, replicas and endpoint. */
export class BanlieueTopologyClusterTemplate extends Chart {
  constructor(scope: Construct, id: string, v: VariableResolver) {
    super(scope, id);
    new Cluster(this, 'cluster', {
      metadata: { name: v.str(CLUSTER_NAME), namespace: v.str(NAMESPACE) },
      spec: {
        topology: {
          classRef: { name: CLUSTER_CLASS_NAME },
          version: v.str(KUBERNETES_VERSION),
          controlPlane: { replicas: v.int(CONTROL_PLANE_MACHINE_COUNT) },
          workers: { machineDeployments: [{ class: 'worker', name: 'md-0', replicas: v.int(WORKER_MACHINE_COUNT) }] },
          variables: [{ name: 'controlPlaneEndpoint', value: { host: v.str(CONTROL_PLANE_ENDPOINT_IP), port: v.int(CONTROL_PLANE_ENDPOINT_PORT) } }],
        },
      },
    });
  }
}

/**
 * The Charts of `flavor`: its own, after the ClusterClass it names if any (in
 * the order clusterctl merges them into a generation).
 */
function templateCharts(scope: Construct, flavor: string, v: VariableResolver): { clusterClass?: Chart; template: Chart } {
  if (flavor !== CLUSTERCLASS_FLAVOR) return { template: new BanlieueClusterTemplate(scope, 'template', flavor, v) };
  return { clusterClass: new BanlieueClusterClass(scope, 'class', v), template: new BanlieueTopologyClusterTemplate(scope, 'template', v) };
}

export interface RenderedTemplate {
  readonly fileName: string;
  /** The asset: multi-document YAML with clusterctl placeholders. */
  readonly yaml: string;
  /** Its variables and those of its ClusterClass, in first-use order (what `--list-variables` lists). */
  readonly variables: readonly TemplateVariable[];
  /** The asset of the ClusterClass the template's Cluster names, which clusterctl adds to a generation. */
  readonly clusterClass?: { readonly fileName: string; readonly yaml: string };
}

/** The release assets of `flavor`. */
export function renderClusterTemplate(flavor: string): RenderedTemplate {
  const v = new PlaceholderResolver();
  const { clusterClass, template } = templateCharts(new App(), flavor, v);
  // Each object's JSON without Chart.toJson()'s schema validation, which the
  // placeholders of integer fields would fail; renderClusterWithValues checks.
  const yaml = (chart: Chart): string =>
    templateYaml(
      chart.apiObjects.map((o) => o.toJson()),
      v.used,
    );
  return {
    fileName: templateFileName(flavor),
    yaml: yaml(template),
    variables: v.used,
    ...(clusterClass ? { clusterClass: { fileName: clusterClassFileName(CLUSTER_CLASS_NAME), yaml: yaml(clusterClass) } } : {}),
  };
}

/**
 * The objects `clusterctl generate cluster` gives for `flavor` with `values`
 * set (the rest at their default, else their sample; the ClusterClass first,
 * as clusterctl merges it in), validated against banlieue's API schema;
 * throws on a schema violation.
 */
export function renderClusterWithValues(flavor: string, values: Readonly<Record<string, string | number>> = {}): Record<string, unknown>[] {
  // Chart.toJson() runs every construct's validation (the schema check of the banlieue kinds).
  const { clusterClass, template } = templateCharts(new App(), flavor, new ValueResolver(values));
  return [...(clusterClass ? clusterClass.toJson() : []), ...template.toJson()] as Record<string, unknown>[];
}
