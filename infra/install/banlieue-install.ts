// The whole install, as parts. BanlieueInstall puts every part into one scope
// (for users' cdk8s apps); addInstallCharts gives each part its own chart (for
// dist/ and `banlieue bootstrap operator`, one file per chart, in apply order).
import { type App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { BanlieueCustomResourceDefinitions } from '../crds/custom-resource-definition.js';
import { AdmissionPolicies } from './admission-policies.js';
import { CapiInfrastructureRole } from './capi-infrastructure-role.js';
import { clusterScoped } from './cluster-scoped.js';
import { ControllerSecretGuard } from './controller-secret-guard.js';
import { resolveInstallProps, providerRolesOf, CLUSTER_SIDE_BACKENDS, type BanlieueInstallProps, type ResolvedInstallProps } from './install-props.js';
import { componentLabels, labelProviderComponents } from './labels.js';
import { NetworkPolicies } from './network-policies.js';
import { controllerRules, providerCredentialRules, providerRules } from './rbac-rules.js';
import { HostRoleRules } from './host-role-rules.js';
import { RoleWorkload } from './role-workload.js';
import { TemplateImmutability } from './template-immutability.js';

interface InstallPart {
  /** Chart id and construct id. */
  readonly id: string;
  readonly enabled: (props: ResolvedInstallProps) => boolean;
  readonly build: (scope: Construct, props: ResolvedInstallProps) => void;
}

const always = (): boolean => true;

export const CONTROLLER_NAME = 'banlieue-controller';

export const INSTALL_PARTS: readonly InstallPart[] = [
  {
    id: 'banlieue-namespace',
    enabled: always,
    build: (scope, props) =>
      void clusterScoped(
        new kplus.k8s.KubeNamespace(scope, 'namespace', {
          metadata: { name: props.namespace, labels: componentLabels('namespace') },
        }),
      ),
  },
  {
    id: 'banlieue-crds',
    enabled: always,
    build: (scope) => {
      new BanlieueCustomResourceDefinitions(scope, 'crds');
      // A rule of the API that the schema cannot state (it must tell CAPI's dry run apart): with the CRDs, never optional.
      new TemplateImmutability(scope, 'template-immutability');
    },
  },
  {
    id: 'banlieue-capi-infrastructure',
    enabled: always,
    build: (scope) => void new CapiInfrastructureRole(scope, 'capi-infrastructure'),
  },
  {
    id: 'banlieue-controller',
    enabled: always,
    build: (scope, props) => {
      new RoleWorkload(scope, 'controller', {
        install: props,
        name: CONTROLLER_NAME,
        component: 'controller',
        rules: controllerRules(),
        watchesLeases: true,
        args: ['controller'],
      });
      // Part of the controller's least privilege, not an optional policy: installed even
      // when admissionPolicies is false.
      new ControllerSecretGuard(scope, 'secret-guard', { namespace: props.namespace, serviceAccount: CONTROLLER_NAME });
    },
  },
  {
    id: 'banlieue-providers',
    enabled: (props) => providerRolesOf(props).length > 0,
    build: (scope, props) => {
      const namespaces = props.providerNamespaces;
      for (const backend of providerRolesOf(props)) {
        // The Cloud Hypervisor provider runs on each host (it drives local VMM sockets): permissions only, each host its own identity.
        if (!CLUSTER_SIDE_BACKENDS.includes(backend)) {
          new HostRoleRules(scope, `provider-${backend}`, { backend });
          continue;
        }
        new RoleWorkload(scope, `provider-${backend}`, {
          install: props,
          name: `banlieue-provider-${backend}`,
          component: `provider-${backend}`,
          rules: [...providerRules(backend), ...(namespaces ? [] : providerCredentialRules())],
          ...(namespaces ? { namespacedRules: { suffix: 'credentials', namespaces, rules: providerCredentialRules() } } : {}),
          args: ['provider', backend],
          shards: props.providerShards
            .filter((shard) => shard.backend === backend)
            .map((shard) => ({ name: shard.name, args: ['provider', backend, `--provider-selector=${shard.providerSelector}`] })),
        });
      }
    },
  },
  {
    id: 'banlieue-admission-policies',
    enabled: (props) => props.admissionPolicies,
    build: (scope) => void new AdmissionPolicies(scope, 'admission-policies'),
  },
  {
    id: 'banlieue-network-policies',
    enabled: (props) => props.networkPolicies,
    build: (scope, props) =>
      void new NetworkPolicies(scope, 'network-policies', {
        namespace: props.namespace,
        exposeMetrics: props.exposeMetrics,
        egress: props.networkPolicyEgress,
      }),
  },
];

/** banlieue's install (CRDs, RBAC, workloads) as one construct for a cdk8s app. */
export class BanlieueInstall extends Construct {
  public readonly props: ResolvedInstallProps;

  constructor(scope: Construct, id: string, props: BanlieueInstallProps = {}) {
    super(scope, id);
    this.props = resolveInstallProps(props);
    for (const part of INSTALL_PARTS) {
      if (part.enabled(this.props)) part.build(new Construct(this, part.id), this.props);
    }
    labelProviderComponents(this);
  }
}

/** One chart per install part, ordered so each applies after the one before. */
export function addInstallCharts(app: App, props: BanlieueInstallProps = {}): Chart[] {
  const resolved = resolveInstallProps(props);
  const charts: Chart[] = [];
  for (const part of INSTALL_PARTS) {
    if (!part.enabled(resolved)) continue;
    const chart = new Chart(app, part.id);
    part.build(chart, resolved);
    labelProviderComponents(chart);
    const previous = charts.at(-1);
    if (previous) chart.addDependency(previous);
    charts.push(chart);
  }
  return charts;
}
