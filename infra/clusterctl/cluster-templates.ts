// The cluster templates `clusterctl generate cluster --infrastructure
// banlieue[:flavor]` reads from a release: one flavor per backend, each a
// Cluster on that backend's InfraCluster, a KubeadmControlPlane and a
// MachineDeployment of workers, authored with banlieue's typed constructs and
// the ones `make imports` generates from CAPI's own v1beta2 CRDs (imports/).
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
import { API_VERSION, INFRA_GROUP } from '../api/kind.js';
import { Label } from '../api/well-known.js';
import {
  CloudHypervisorCluster,
  CloudHypervisorMachineTemplate,
  LibvirtCluster,
  LibvirtMachineTemplate,
  ProxmoxCluster,
  ProxmoxMachineTemplate,
  VSphereCluster,
  VSphereClusterTemplate,
  VSphereMachineTemplate,
} from '../authoring/kinds.js';
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
const CLUSTER_NAME = stringVariable({ name: 'CLUSTER_NAME', description: 'Name of the Cluster; prefixes every object.', sample: 'capi-quickstart', setBy: 'the `<name>` argument' });
const NAMESPACE = stringVariable({ name: 'NAMESPACE', description: 'Namespace of every object; banlieue Providers of this namespace serve it.', sample: 'default', setBy: '`--target-namespace` (else the kubeconfig context namespace)' });
const KUBERNETES_VERSION = stringVariable({ name: 'KUBERNETES_VERSION', description: 'Kubernetes version of the control plane and workers; the machine image must carry it.', sample: 'v1.34.1', setBy: '`--kubernetes-version`' });
const CONTROL_PLANE_MACHINE_COUNT = integerVariable({ name: 'CONTROL_PLANE_MACHINE_COUNT', description: 'Control-plane Machines.', sample: 1, setBy: '`--control-plane-machine-count` (default 1)' });
const WORKER_MACHINE_COUNT = integerVariable({ name: 'WORKER_MACHINE_COUNT', description: 'Worker Machines.', sample: 0, setBy: '`--worker-machine-count` (default 0)' });

// Every flavor.
const CONTROL_PLANE_ENDPOINT_IP = stringVariable({ name: 'CONTROL_PLANE_ENDPOINT_IP', description: 'Address of the API server (a VIP or load balancer you provide); immutable once set.', sample: '192.0.2.10' });
const CONTROL_PLANE_ENDPOINT_PORT = integerVariable({ name: 'CONTROL_PLANE_ENDPOINT_PORT', description: 'Port of the API server.', default: 6443, sample: 6443 });
const CONTROL_PLANE_MACHINE_CPUS = integerVariable({ name: 'CONTROL_PLANE_MACHINE_CPUS', description: 'vCPUs of a control-plane machine.', default: 2, sample: 2 });
const CONTROL_PLANE_MACHINE_MEMORY_MIB = integerVariable({ name: 'CONTROL_PLANE_MACHINE_MEMORY_MIB', description: 'Memory of a control-plane machine, MiB.', default: 4096, sample: 4096 });
const WORKER_MACHINE_CPUS = integerVariable({ name: 'WORKER_MACHINE_CPUS', description: 'vCPUs of a worker machine.', default: 2, sample: 2 });
const WORKER_MACHINE_MEMORY_MIB = integerVariable({ name: 'WORKER_MACHINE_MEMORY_MIB', description: 'Memory of a worker machine, MiB.', default: 4096, sample: 4096 });
const MACHINE_OS_DISK_SIZE_GIB = integerVariable({ name: 'MACHINE_OS_DISK_SIZE_GIB', description: 'OS disk of every machine, GiB (grown from the image, never shrunk).', default: 40, sample: 40 });

// Per backend.
const VSPHERE_TEMPLATE = stringVariable({ name: 'VSPHERE_TEMPLATE', description: 'VM template to clone, present under this name in every vCenter of the cluster.', sample: 'ubuntu-2404-kube-v1.34.1' });
const VSPHERE_NETWORK = stringVariable({ name: 'VSPHERE_NETWORK', description: 'Port group of the machines\' one NIC (DHCP).', sample: 'VM Network' });
const PROXMOX_TEMPLATE_VMID = integerVariable({ name: 'PROXMOX_TEMPLATE_VMID', description: 'VMID of the template to clone, usable from every node (shared storage).', sample: 9000 });
const PROXMOX_BRIDGE = stringVariable({ name: 'PROXMOX_BRIDGE', description: 'Bridge of the machines\' one NIC (DHCP).', default: 'vmbr0', sample: 'vmbr0' });
const PROXMOX_ISO_STORAGE = stringVariable({ name: 'PROXMOX_ISO_STORAGE', description: 'Storage with `iso` content for the cloud-init seed ISO that carries the bootstrap data.', default: 'local', sample: 'local' });
const LIBVIRT_POOL = stringVariable({ name: 'LIBVIRT_POOL', description: 'Storage pool for the disks and the seed ISO.', default: 'default', sample: 'default' });
const LIBVIRT_BASE_VOLUME = stringVariable({ name: 'LIBVIRT_BASE_VOLUME', description: 'qcow2 volume in the pool the OS disk is an overlay of.', sample: 'ubuntu-2404-kube-v1.34.1.qcow2' });
const LIBVIRT_NETWORK = stringVariable({ name: 'LIBVIRT_NETWORK', description: 'libvirt network of the machines\' one NIC (DHCP).', default: 'default', sample: 'default' });
const CLOUD_HYPERVISOR_IMAGE = stringVariable({ name: 'CLOUD_HYPERVISOR_IMAGE', description: 'Disk image (name or path on the host) copied as the OS disk.', sample: 'ubuntu-2404-kube-v1.34.1.raw' });
const CLOUD_HYPERVISOR_STORAGE_CLASS = stringVariable({ name: 'CLOUD_HYPERVISOR_STORAGE_CLASS', description: 'Host-declared storage class for the disks.', sample: 'local' });
const CLOUD_HYPERVISOR_NETWORK_CLASS = stringVariable({ name: 'CLOUD_HYPERVISOR_NETWORK_CLASS', description: 'Host-declared network class (bridge) of the machines\' one NIC (DHCP).', sample: 'lan' });

/** What a flavor's machine template asks of one machine. */
interface MachineShape {
  readonly cpus: number;
  readonly memoryMiB: number;
  readonly osDiskGiB: number;
}

/** What differs between backends: the InfraCluster and InfraMachineTemplate kinds and the machine spec. */
interface BackendFlavor {
  /** clusterctl flavor name; '' is the default flavor (`cluster-template.yaml`). */
  readonly flavor: string;
  readonly clusterKind: string;
  readonly machineTemplateKind: string;
  cluster(scope: Construct, id: string, metadata: { name: string; namespace: string }, endpoint: { host: string; port: number }): ApiObject;
  machineTemplate(scope: Construct, id: string, metadata: { name: string; namespace: string }, shape: MachineShape, v: VariableResolver): ApiObject;
}

// No providerRefs or providerSelector: each InfraCluster aggregates every
// Provider of its backend in the namespace (edit the generated file to narrow).
const BACKENDS: readonly BackendFlavor[] = [
  {
    flavor: '',
    clusterKind: 'VSphereCluster',
    machineTemplateKind: 'VSphereMachineTemplate',
    cluster: (scope, id, metadata, endpoint) => new VSphereCluster(scope, id, { metadata, spec: { controlPlaneEndpoint: endpoint } }),
    machineTemplate: (scope, id, metadata, shape, v) =>
      new VSphereMachineTemplate(scope, id, {
        metadata,
        spec: {
          template: {
            spec: {
              template: v.str(VSPHERE_TEMPLATE),
              numCpus: shape.cpus,
              memoryMiB: shape.memoryMiB,
              disks: [{ name: 'os', sizeGiB: shape.osDiskGiB }],
              network: [{ name: 'eth0', portGroup: v.str(VSPHERE_NETWORK) }],
            },
          },
        },
      }),
  },
  {
    flavor: 'proxmox',
    clusterKind: 'ProxmoxCluster',
    machineTemplateKind: 'ProxmoxMachineTemplate',
    cluster: (scope, id, metadata, endpoint) => new ProxmoxCluster(scope, id, { metadata, spec: { controlPlaneEndpoint: endpoint } }),
    machineTemplate: (scope, id, metadata, shape, v) =>
      new ProxmoxMachineTemplate(scope, id, {
        metadata,
        spec: {
          template: {
            spec: {
              templateVmid: v.int(PROXMOX_TEMPLATE_VMID),
              cores: shape.cpus,
              memoryMiB: shape.memoryMiB,
              osDiskSizeGiB: shape.osDiskGiB,
              nics: [{ name: 'eth0', bridge: v.str(PROXMOX_BRIDGE) }],
              isoStorage: v.str(PROXMOX_ISO_STORAGE),
            },
          },
        },
      }),
  },
  {
    flavor: 'libvirt',
    clusterKind: 'LibvirtCluster',
    machineTemplateKind: 'LibvirtMachineTemplate',
    cluster: (scope, id, metadata, endpoint) => new LibvirtCluster(scope, id, { metadata, spec: { controlPlaneEndpoint: endpoint } }),
    machineTemplate: (scope, id, metadata, shape, v) =>
      new LibvirtMachineTemplate(scope, id, {
        metadata,
        spec: {
          template: {
            spec: {
              pool: v.str(LIBVIRT_POOL),
              bootSource: { kind: 'backingVolume', volume: v.str(LIBVIRT_BASE_VOLUME) },
              vcpus: shape.cpus,
              memoryMiB: shape.memoryMiB,
              disks: [{ name: 'os', sizeGiB: shape.osDiskGiB }],
              network: [{ name: 'eth0', source: { kind: 'network', name: v.str(LIBVIRT_NETWORK) } }],
            },
          },
        },
      }),
  },
  {
    flavor: 'cloud-hypervisor',
    clusterKind: 'CloudHypervisorCluster',
    machineTemplateKind: 'CloudHypervisorMachineTemplate',
    cluster: (scope, id, metadata, endpoint) => new CloudHypervisorCluster(scope, id, { metadata, spec: { controlPlaneEndpoint: endpoint } }),
    machineTemplate: (scope, id, metadata, shape, v) =>
      new CloudHypervisorMachineTemplate(scope, id, {
        metadata,
        spec: {
          template: {
            spec: {
              bootSource: { kind: 'image', image: v.str(CLOUD_HYPERVISOR_IMAGE) },
              cpus: { boot: shape.cpus },
              memory: { sizeMiB: shape.memoryMiB },
              osDiskSizeGiB: shape.osDiskGiB,
              storageClass: v.str(CLOUD_HYPERVISOR_STORAGE_CLASS),
              nics: [{ name: 'eth0', networkClass: v.str(CLOUD_HYPERVISOR_NETWORK_CLASS) }],
            },
          },
        },
      }),
  },
];

/** The flavor whose Cluster is built from a ClusterClass (vSphere templates) that it ships too. */
export const CLUSTERCLASS_FLAVOR = 'clusterclass';

/** The flavors a release ships, in release order. */
export const FLAVORS: readonly string[] = [...BACKENDS.map((b) => b.flavor), CLUSTERCLASS_FLAVOR];

/** The release asset of a flavor, as clusterctl names it. */
export function templateFileName(flavor: string): string {
  return flavor === '' ? 'cluster-template.yaml' : `cluster-template-${flavor}.yaml`;
}

function backendOf(flavor: string): BackendFlavor {
  const backend = BACKENDS.find((b) => b.flavor === flavor);
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
        infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.clusterKind, name },
        controlPlaneRef: { apiGroup: 'controlplane.cluster.x-k8s.io', kind: 'KubeadmControlPlane', name: controlPlane.name },
      },
    });
    backend.cluster(this, 'infra-cluster', meta(''), { host: v.str(CONTROL_PLANE_ENDPOINT_IP), port: v.int(CONTROL_PLANE_ENDPOINT_PORT) });
    const osDiskGiB = v.int(MACHINE_OS_DISK_SIZE_GIB);
    backend.machineTemplate(this, 'control-plane-template', controlPlane, { cpus: v.int(CONTROL_PLANE_MACHINE_CPUS), memoryMiB: v.int(CONTROL_PLANE_MACHINE_MEMORY_MIB), osDiskGiB }, v);
    new KubeadmControlPlane(this, 'control-plane', {
      metadata: controlPlane,
      spec: {
        replicas: v.int(CONTROL_PLANE_MACHINE_COUNT),
        version,
        machineTemplate: { spec: { infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.machineTemplateKind, name: controlPlane.name } } },
        kubeadmConfigSpec: {
          initConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
          joinConfiguration: { nodeRegistration: { name: NODE_NAME, kubeletExtraArgs: KUBELET_ARGS } },
        },
      },
    });

    backend.machineTemplate(this, 'worker-template', workers, { cpus: v.int(WORKER_MACHINE_CPUS), memoryMiB: v.int(WORKER_MACHINE_MEMORY_MIB), osDiskGiB }, v);
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
            infrastructureRef: { apiGroup: INFRA_GROUP, kind: backend.machineTemplateKind, name: workers.name },
          },
        },
      },
    });
  }
}

/**
 * The ClusterClass the `clusterclass` flavor's Cluster names. clusterctl finds a
 * class by name in the release (`clusterclass-<name>.yaml`) and adds it to the
 * generation unless the management cluster has it already, so its name is fixed.
 */
export const CLUSTER_CLASS_NAME = 'banlieue-vsphere';

/** The release asset holding the ClusterClass `name`, as clusterctl looks it up. */
export const clusterClassFileName = (name: string): string => `clusterclass-${name}.yaml`;

/**
 * The ClusterClass over VSphereClusterTemplate, KubeadmControlPlaneTemplate,
 * VSphereMachineTemplate and KubeadmConfigTemplate. The endpoint differs per
 * Cluster, so it is a class variable patched into the InfraClusterTemplate,
 * not a template value. To change machines later, create new templates and
 * point the class at them: template specs are immutable (CAPI then rolls the
 * MachineDeployments).
 */
export class BanlieueClusterClass extends Chart {
  constructor(scope: Construct, id: string, v: VariableResolver) {
    super(scope, id);
    const backend = backendOf('');
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
        infrastructure: { templateRef: ref(INFRA_GROUP, `${backend.clusterKind}Template`, className) },
        controlPlane: {
          templateRef: ref(KUBEADM_CONTROL_PLANE_GROUP, 'KubeadmControlPlaneTemplate', controlPlane.name),
          machineInfrastructure: { templateRef: ref(INFRA_GROUP, backend.machineTemplateKind, controlPlane.name) },
        },
        workers: {
          machineDeployments: [
            {
              class: 'worker',
              bootstrap: { templateRef: ref(KUBEADM_BOOTSTRAP_GROUP, 'KubeadmConfigTemplate', worker.name) },
              infrastructure: { templateRef: ref(INFRA_GROUP, backend.machineTemplateKind, worker.name) },
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
                selector: { apiVersion: `${INFRA_GROUP}/${API_VERSION}`, kind: `${backend.clusterKind}Template`, matchResources: { infrastructureCluster: true } },
                jsonPatches: [{ op: PatchOp.ADD, path: '/spec/template/spec/controlPlaneEndpoint', valueFrom: { variable: 'controlPlaneEndpoint' } }],
              },
            ],
          },
        ],
      },
    });
    new VSphereClusterTemplate(this, 'infra-cluster-template', { metadata: classMeta(''), spec: { template: { spec: {} } } });
    backend.machineTemplate(this, 'control-plane-template', controlPlane, { cpus: v.int(CONTROL_PLANE_MACHINE_CPUS), memoryMiB: v.int(CONTROL_PLANE_MACHINE_MEMORY_MIB), osDiskGiB }, v);
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
    backend.machineTemplate(this, 'worker-template', worker, { cpus: v.int(WORKER_MACHINE_CPUS), memoryMiB: v.int(WORKER_MACHINE_MEMORY_MIB), osDiskGiB }, v);
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
  const yaml = (chart: Chart): string => templateYaml(chart.apiObjects.map((o) => o.toJson()), v.used);
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
