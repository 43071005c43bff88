// One banlieue role (the controller, or a cluster-side provider): its identity, its
// RBAC and its Deployment (a provider that runs on its hosts: host-role-rules.ts). Every role is installed
// by this one construct, so they cannot drift apart.
import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-30';
import { Construct } from 'constructs';
import { Label } from '../api/well-known.js';
import { clusterScoped } from './cluster-scoped.js';
import { imageOf, type ResolvedInstallProps } from './install-props.js';
import { componentLabels, selectorLabels } from './labels.js';
import { MetricsService, METRICS_PORT_NAME } from './metrics-service.js';
import { leaderElectionRules, type PolicyRule } from './rbac-rules.js';
import { ROLE_MEMORY, roleRuntimeEnv } from './role-runtime.js';

export const METRICS_PORT = 8080;
export const HEALTH_PORT = 8081;
const NON_ROOT_UID = 65532;

export interface RoleWorkloadProps {
  readonly install: ResolvedInstallProps;
  /** Object name of the ServiceAccount, roles, bindings and Deployment, e.g. banlieue-controller. */
  readonly name: string;
  /** app.kubernetes.io/component value, e.g. controller or provider-vsphere. */
  readonly component: string;
  /** Cluster-wide rules of the role. */
  readonly rules: PolicyRule[];
  /**
   * Rules granted only in some namespaces: a Role and RoleBinding named
   * `<name>-<suffix>` in each.
   * @default none
   */
  readonly namespacedRules?: { readonly suffix: string; readonly namespaces: readonly string[]; readonly rules: PolicyRule[] };
  /**
   * The role also lists and watches the Leases of the install namespace (the controller: the
   * provider roles' Leases tell which run).
   * @default false
   */
  readonly watchesLeases?: boolean;
  /** `banlieue` subcommand and flags, e.g. ['provider', 'vsphere']. */
  readonly args: string[];
  /**
   * Run the role as shards: one Deployment `<name>-<shard>` per shard, with the shard's args
   * instead of `args`, its pods labelled banlieue.io/shard, all under the role's one identity.
   * @default one Deployment `<name>` running `args`
   */
  readonly shards?: readonly RoleShard[];
}

/** One Deployment of a sharded role. */
export interface RoleShard {
  /** A DNS label: the Deployment is `<role name>-<shard name>`. */
  readonly name: string;
  /** Its `banlieue` subcommand and flags. */
  readonly args: string[];
}

export class RoleWorkload extends Construct {
  constructor(scope: Construct, id: string, props: RoleWorkloadProps) {
    super(scope, id);
    const { install, name, component } = props;
    const labels = componentLabels(component);
    const meta = { name, namespace: install.namespace, labels };

    new kplus.ServiceAccount(this, 'service-account', { metadata: meta, automountToken: true });
    const subject = { kind: 'ServiceAccount', name, namespace: install.namespace };

    clusterScoped(new kplus.k8s.KubeClusterRole(this, 'cluster-role', { metadata: { name, labels }, rules: props.rules }));
    clusterScoped(
      new kplus.k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', {
        metadata: { name, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [subject],
      }),
    );
    this.addRole('leader-election', { ...meta, name: `${name}-leader-election` }, leaderElectionRules(props.watchesLeases ?? false), subject);
    if (props.namespacedRules) {
      const { suffix, namespaces, rules } = props.namespacedRules;
      for (const namespace of namespaces) this.addRole(`${suffix}-${namespace}`, { name: `${name}-${suffix}`, namespace, labels }, rules, subject);
    }

    const shards = props.shards ?? [];
    if (shards.length === 0) this.addDeployment(props, 'deployment', name, props.args, {});
    for (const shard of shards) this.addDeployment(props, `deployment-${shard.name}`, `${name}-${shard.name}`, shard.args, { [Label.shard]: shard.name });
    if (install.exposeMetrics) {
      new MetricsService(this, 'metrics', { namespace: install.namespace, name, component, port: METRICS_PORT, serviceMonitor: install.serviceMonitor });
    }
  }

  private addRole(
    id: string,
    metadata: { name: string; namespace: string; labels: Record<string, string> },
    rules: PolicyRule[],
    subject: kplus.k8s.Subject,
  ): void {
    new kplus.k8s.KubeRole(this, `${id}-role`, { metadata, rules });
    new kplus.k8s.KubeRoleBinding(this, `${id}-role-binding`, {
      metadata,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: metadata.name },
      subjects: [subject],
    });
  }

  /** A Deployment of the role: `id` and `name` its own, `args` what it runs, `shardLabels` what tells its pods from the other shards'. */
  private addDeployment(props: RoleWorkloadProps, id: string, name: string, args: string[], shardLabels: Record<string, string>): void {
    const { install, component } = props;
    // The pod needs only the ServiceAccount's name. A reference by name, because cdk8s-plus's
    // own ServiceAccount class does not satisfy its IServiceAccount under exactOptionalPropertyTypes
    // (jsii declares Resource.resourceName `string | undefined` against IApiResource's optional
    // `resourceName?: string`). The reference adds a construct node, no manifest.
    const serviceAccount = kplus.ServiceAccount.fromServiceAccountName(this, `${id}-service-account-ref`, props.name, { namespaceName: install.namespace });
    const selector = { ...selectorLabels(component), ...shardLabels };
    const labels = { ...componentLabels(component), ...shardLabels };
    const runAs = { ensureNonRoot: true, user: NON_ROOT_UID, group: NON_ROOT_UID };
    const deployment = new kplus.Deployment(this, id, {
      metadata: { name, namespace: install.namespace, labels },
      replicas: 1,
      progressDeadline: Duration.seconds(install.progressDeadlineSeconds),
      select: false,
      serviceAccount,
      // The role talks to the API server with its own token (cdk8s-plus defaults to none).
      automountServiceAccountToken: true,
      podMetadata: { labels },
      securityContext: { ...runAs, fsGroupChangePolicy: kplus.FsGroupChangePolicy.ON_ROOT_MISMATCH },
      containers: [
        {
          // clusterctl and CAPI tooling expect the manager container by this name.
          name: 'manager',
          image: imageOf(install),
          imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
          args: [
            ...args,
            `--metrics-port=${METRICS_PORT}`,
            // Unauthenticated metrics stay on loopback unless the install exposes them.
            `--metrics-bind-address=${install.exposeMetrics ? '0.0.0.0' : '127.0.0.1'}`,
            // The kubelet probes health on the pod IP.
            `--health-port=${HEALTH_PORT}`,
          ],
          ports: [...(install.exposeMetrics ? [{ number: METRICS_PORT, name: METRICS_PORT_NAME }] : []), { number: HEALTH_PORT, name: 'health' }],
          liveness: kplus.Probe.fromHttpGet('/livez', {
            port: HEALTH_PORT,
            initialDelaySeconds: Duration.seconds(10),
            periodSeconds: Duration.seconds(30),
          }),
          readiness: kplus.Probe.fromHttpGet('/readyz', { port: HEALTH_PORT, periodSeconds: Duration.seconds(5) }),
          envVariables: {
            POD_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAME),
            POD_NAMESPACE: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
            ...Object.fromEntries(Object.entries(roleRuntimeEnv(ROLE_MEMORY.limitMiB)).map(([k, v]) => [k, kplus.EnvValue.fromValue(v)])),
          },
          securityContext: { ...runAs, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false },
          resources: {
            cpu: { request: kplus.Cpu.millis(50), limit: kplus.Cpu.millis(1000) },
            memory: { request: Size.mebibytes(ROLE_MEMORY.requestMiB), limit: Size.mebibytes(ROLE_MEMORY.limitMiB) },
          },
        },
      ],
    });
    deployment.select(kplus.LabelSelector.of({ labels: selector }));
    // cdk8s-plus adds a construct-path label holding a hash; selection is by our labels.
    ApiObject.of(deployment).addJsonPatch(JsonPatch.remove('/spec/template/metadata/labels/cdk8s.io~1metadata.addr'));
  }
}
