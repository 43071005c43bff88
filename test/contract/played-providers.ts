// A control-plane and a bootstrap provider that the ClusterClass e2e plays.
// Neither can run for real here: KubeadmControlPlane and CABPK both need the
// workload cluster's API, which only real nodes would serve. So the test
// installs what a provider would (CRDs with the CAPI contract label, RBAC
// aggregated into CAPI's manager) and writes each object's status as the
// provider would, following CAPI's v1beta2 contracts
// (docs/book/src/developer/providers/contracts/control-plane.md and
// bootstrap-config.md): nothing else fills those fields.
import { stringify } from 'yaml';

export const CONTROL_PLANE_GROUP = 'controlplane.test.banlieue.io';
export const BOOTSTRAP_GROUP = 'bootstrap.test.banlieue.io';
const VERSION = 'v1alpha1';
export const CONTROL_PLANE_API = `${CONTROL_PLANE_GROUP}/${VERSION}`;
export const BOOTSTRAP_API = `${BOOTSTRAP_GROUP}/${VERSION}`;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A namespaced CRD whose spec and status take any field (the played provider owns their shape), found by CAPI through its contract label. */
function crd(group: string, kind: string, plural: string, template: boolean): Json {
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const spec = template ? { type: 'object', properties: { template: { type: 'object', properties: { metadata: open, spec: open } } } } : open;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // CAPI fetches the CRD by flect's plural of the kind, and reads which version serves the v1beta2 contract from the label.
    metadata: { name: `${plural}.${group}`, labels: { 'cluster.x-k8s.io/v1beta2': VERSION } },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase() },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: template ? undefined : { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec, ...(template ? {} : { status: open }) } } },
        },
      ],
    },
  };
}

/** The CRDs of TestControlPlane(Template) and TestBootstrapConfig(Template), and the rules CAPI's manager needs on them (as a provider's components grant them). */
export function playedProviderComponents(): string {
  const rbac = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'capi-played-providers', labels: { 'cluster.x-k8s.io/aggregate-to-manager': 'true' } },
    rules: [
      {
        apiGroups: [CONTROL_PLANE_GROUP, BOOTSTRAP_GROUP],
        resources: ['testcontrolplanes', 'testcontrolplanetemplates', 'testbootstrapconfigs', 'testbootstrapconfigtemplates'],
        verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
      },
    ],
  };
  const docs = [
    crd(CONTROL_PLANE_GROUP, 'TestControlPlane', 'testcontrolplanes', false),
    crd(CONTROL_PLANE_GROUP, 'TestControlPlaneTemplate', 'testcontrolplanetemplates', true),
    crd(BOOTSTRAP_GROUP, 'TestBootstrapConfig', 'testbootstrapconfigs', false),
    crd(BOOTSTRAP_GROUP, 'TestBootstrapConfigTemplate', 'testbootstrapconfigtemplates', true),
    rbac,
  ];
  return docs.map((d) => stringify(d)).join('---\n');
}

type Kubectl = (args: string[], input?: string) => Promise<string>;

function condition(type: string, reason: string, message: string, generation: number): Json {
  return { type, status: 'True', reason, message, observedGeneration: generation, lastTransitionTime: new Date().toISOString() };
}

/**
 * Plays a control plane without Machines (as a hosted one): every TestControlPlane
 * of `ns` reports itself initialized and available at its `spec.version`, which is
 * what the topology controller waits for before it creates or rolls workers
 * (status.versions equal to spec.version: neither provisioning nor upgrading).
 * `externallyManaged` also says so as a hosted control plane does
 * (status.externalManagedControlPlane): CAPI then deletes a deleted Machine's Node,
 * which it does not while a cluster has no control-plane Machine otherwise.
 */
export async function playControlPlanes(kubectl: Kubectl, ns: string, options: { externallyManaged?: boolean } = {}): Promise<void> {
  const items = (JSON.parse(await kubectl(['get', 'testcontrolplanes', '-n', ns, '-o', 'json'])) as { items: Json[] }).items;
  for (const cp of items) {
    const version = cp.spec?.version as string | undefined;
    if (!version || cp.status?.versions?.[0]?.version === version) continue;
    const generation = cp.metadata.generation as number;
    const status = {
      initialization: { controlPlaneInitialized: true },
      versions: [{ version }],
      observedGeneration: generation,
      conditions: [condition('Available', 'Available', '', generation)],
      ...(options.externallyManaged ? { externalManagedControlPlane: true } : {}),
    };
    await kubectl([
      'patch',
      'testcontrolplanes',
      cp.metadata.name as string,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
    ]);
  }
}

/**
 * Plays a bootstrap provider: for every TestBootstrapConfig of `ns` not served yet,
 * a data Secret owned by it (key `value`, and `format` as CAPV reads it), then
 * `status.dataSecretName` and `status.initialization.dataSecretCreated`.
 */
export async function playBootstrapConfigs(kubectl: Kubectl, ns: string, userData: string): Promise<void> {
  const items = (JSON.parse(await kubectl(['get', 'testbootstrapconfigs', '-n', ns, '-o', 'json'])) as { items: Json[] }).items;
  for (const config of items) {
    if (config.status?.initialization?.dataSecretCreated === true) continue;
    const name = config.metadata.name as string;
    const owner = { apiVersion: BOOTSTRAP_API, kind: 'TestBootstrapConfig', name, uid: config.metadata.uid as string, controller: true };
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'cluster.x-k8s.io/secret',
      metadata: {
        name,
        namespace: ns,
        labels: { 'cluster.x-k8s.io/cluster-name': config.metadata.labels?.['cluster.x-k8s.io/cluster-name'] as string },
        ownerReferences: [owner],
      },
      stringData: { value: userData, format: 'cloud-config' },
    };
    await kubectl(['apply', '--server-side', '--field-manager=played-bootstrap', '-f', '-'], JSON.stringify(secret));
    const generation = config.metadata.generation as number;
    const status = {
      initialization: { dataSecretCreated: true },
      dataSecretName: name,
      observedGeneration: generation,
      conditions: [condition('Ready', 'DataSecretAvailable', '', generation)],
    };
    await kubectl(['patch', 'testbootstrapconfigs', name, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  }
}
