// The cluster templates `clusterctl generate cluster --infrastructure
// banlieue[:flavor]` reads from a release: one flavor per backend whose API
// entry has one (its `clusterctl`), each a Cluster on that backend's
// InfraCluster, a KubeadmControlPlane and a MachineDeployment of workers,
// authored with banlieue's typed constructs and the ones `make imports`
// generates from CAPI's own v1beta2 CRDs (imports/).
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
} from '../../imports/cluster.x-k8s.io-clusterclass.js';
import { MachineDeployment } from '../../imports/cluster.x-k8s.io-machinedeployment.js';
import { KubeadmControlPlane } from '../../imports/controlplane.cluster.x-k8s.io-kubeadmcontrolplane.js';
import { KubeadmControlPlaneTemplate } from '../../imports/controlplane.cluster.x-k8s.io-kubeadmcontrolplanetemplate.js';
import type { BackendApi } from '../api/backend-api.js';
import { BACKEND_APIS } from '../api/backends.js';
import { API_VERSION, INFRA_GROUP, type KindDefinition } from '../api/kind.js';
import { Label } from '../api/well-known.js';
import { defineConstruct, type BanlieueConstructClass } from '../authoring/banlieue-api-object.js';
import type { ClusterTemplateFlavor, MachineShape } from './flavor.js';
import {
  integerVariable,
  PlaceholderResolver,
  stringVariable,
  templateYaml,
  ValueResolver,
  type TemplateVariable,
  type VariableResolver,
} from './template-variables.js';

// Set by clusterctl itself (its arguments and flags).
const CLUSTER_NAME = stringVariable({
  name: 'CLUSTER_NAME',
  description: 'Name of the Cluster; prefixes every object.',
  sample: 'capi-quickstart',
  setBy: 'the `<name>` argument',
});
const NAMESPACE = stringVariable({
  name: 'NAMESPACE',
  description: 'Namespace of every object; banlieue Providers of this namespace serve it.',
  sample: 'default',
  setBy: '`--target-namespace` (else the kubeconfig context namespace)',
});
const KUBERNETES_VERSION = stringVariable({
  name: 'KUBERNETES_VERSION',
  description: 'Kubernetes version of the control plane and workers; the machine image must carry it.',
  sample: 'v1.34.1',
  setBy: '`--kubernetes-version`',
});
const CONTROL_PLANE_MACHINE_COUNT = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_COUNT',
  description: 'Control-plane Machines.',
  sample: 1,
  setBy: '`--control-plane-machine-count` (default 1)',
});
const WORKER_MACHINE_COUNT = integerVariable({
  name: 'WORKER_MACHINE_COUNT',
  description: 'Worker Machines.',
  sample: 0,
  setBy: '`--worker-machine-count` (default 0)',
});

// Every flavor.
const CONTROL_PLANE_ENDPOINT_IP = stringVariable({
  name: 'CONTROL_PLANE_ENDPOINT_IP',
  description: 'Address of the API server (a VIP or load balancer you provide); immutable once set.',
  sample: '192.0.2.10',
});
const CONTROL_PLANE_ENDPOINT_PORT = integerVariable({
  name: 'CONTROL_PLANE_ENDPOINT_PORT',
  description: 'Port of the API server.',
  default: 6443,
  sample: 6443,
});
const CONTROL_PLANE_MACHINE_CPUS = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_CPUS',
  description: 'vCPUs of a control-plane machine.',
  default: 2,
  sample: 2,
});
const CONTROL_PLANE_MACHINE_MEMORY_MIB = integerVariable({
  name: 'CONTROL_PLANE_MACHINE_MEMORY_MIB',
  description: 'Memory of a control-plane machine, MiB.',
  default: 4096,
  sample: 4096,
});
const WORKER_MACHINE_CPUS = integerVariable({ name: 'WORKER_MACHINE_CPUS', description: 'vCPUs of a worker machine.', default: 2, sample: 2 });
const WORKER_MACHINE_MEMORY_MIB = integerVariable({
  name: 'WORKER_MACHINE_MEMORY_MIB',
  description: 'Memory of a worker machine, MiB.',
  default: 4096,
  sample: 4096,
});
const MACHINE_OS_DISK_SIZE_GIB = integerVariable({
  name: 'MACHINE_OS_DISK_SIZE_GIB',
  description: 'OS disk of every machine, GiB (grown from the image, never shrunk).',
  default: 40,
  sample: 40,
});

/** A backend with a cluster template: its kinds and its flavor. */
interface FlavoredBackend {
  readonly api: BackendApi;
  readonly clusterctl: ClusterTemplateFlavor;
}

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

/** The flavor whose Cluster is built from a ClusterClass (on the default flavor's backend) that it ships too. */
export const CLUSTERCLASS_FLAVOR = 'clusterclass';

/** `flavored`, once each flavor name is known to be unique and not `clusterclass`, and the default ('') a built backend's. */
function checkedFlavors(flavored: readonly FlavoredBackend[]): readonly FlavoredBackend[] {
  const flavors = flavored.map((b) => b.clusterctl.flavor);
  const repeated = flavors.filter((f, i) => flavors.indexOf(f) !== i || f === CLUSTERCLASS_FLAVOR);
  if (repeated.length > 0) throw new Error(`cluster template flavors repeat or take a reserved name: ${repeated.map((f) => `"${f}"`).join(', ')}`);
  if (!flavored.some((b) => b.clusterctl.flavor === '' && b.api.providerRoleBuilt)) {
    throw new Error("no backend whose provider role is built has the default cluster template flavor ('')");
  }
  return flavored;
}

// The backends with a flavor, in backend order. No providerRefs or
// providerSelector: each InfraCluster aggregates every Provider of its backend
// in the namespace (edit the generated file to narrow).
const FLAVORED: readonly FlavoredBackend[] = checkedFlavors(BACKEND_APIS.flatMap((api) => (api.clusterctl ? [{ api, clusterctl: api.clusterctl }] : [])));

/**
 * The flavors a release ships, in release order: those of the backends whose
 * provider role this version has (a template for machines nothing would run is
 * not shipped), then `clusterclass`.
 */
export const FLAVORS: readonly string[] = [...FLAVORED.filter((b) => b.api.providerRoleBuilt).map((b) => b.clusterctl.flavor), CLUSTERCLASS_FLAVOR];

/** Every flavor a template can be rendered for, shipped or not (a backend whose provider role is not built yet): what tests check. */
export const RENDERABLE_FLAVORS: readonly string[] = [...FLAVORED.map((b) => b.clusterctl.flavor), CLUSTERCLASS_FLAVOR];

/** The release asset of a flavor, as clusterctl names it. */
export function templateFileName(flavor: string): string {
  return flavor === '' ? 'cluster-template.yaml' : `cluster-template-${flavor}.yaml`;
}

function backendOf(flavor: string): FlavoredBackend {
  const backend = FLAVORED.find((b) => b.clusterctl.flavor === flavor);
  if (!backend) throw new Error(`cluster template flavor "${flavor}" is not one of: ${FLAVORS.map((f) => f || '(default)').join(', ')}`);
  return backend;
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

/** The backend of the default flavor, which the `clusterclass` flavor's ClusterClass is built on too. */
const CLUSTER_CLASS_BACKEND = backendOf('');

/** The backend whose machine template and InfraCluster a flavor's Cluster uses (the `clusterclass` flavor: its class's). */
export function flavorBackend(flavor: string): BackendApi {
  return flavor === CLUSTERCLASS_FLAVOR ? CLUSTER_CLASS_BACKEND.api : backendOf(flavor).api;
}

/**
 * The ClusterClass the `clusterclass` flavor's Cluster names. clusterctl finds a
 * class by name in the release (`clusterclass-<name>.yaml`) and adds it to the
 * generation unless the management cluster has it already, so its name is fixed.
 */
export const CLUSTER_CLASS_NAME = `banlieue-${CLUSTER_CLASS_BACKEND.api.name}`;

/** The release asset holding the ClusterClass `name`, as clusterctl looks it up. */
export const clusterClassFileName = (name: string): string => `clusterclass-${name}.yaml`;

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
                  kind: backend.api.clusterTemplate.kind,
                  matchResources: { infrastructureCluster: true },
                },
                jsonPatches: [{ op: PatchOp.ADD, path: '/spec/template/spec/controlPlaneEndpoint', valueFrom: { variable: 'controlPlaneEndpoint' } }],
              },
            ],
          },
        ],
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
