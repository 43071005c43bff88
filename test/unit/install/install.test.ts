import { BACKENDS } from '../../../infra/api/backends.js';
import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { BanlieueInstall } from '../../../infra/install/banlieue-install.js';
import { BUILT_IN_BACKENDS } from '../../../controller/backends/registry.js';
import { CLUSTER_SIDE_BACKENDS, PROVIDER_ROLES_BUILT, resolveInstallProps } from '../../../infra/install/install-props.js';
import { renderInstall, type ManifestObject } from '../../../infra/install/render.js';
import { HEALTH_PORT, METRICS_PORT } from '../../../infra/install/role-workload.js';
import { testApp } from '../../support/chart-app.js';

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

type Deployment = ManifestObject & {
  spec: {
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        automountServiceAccountToken: boolean;
        serviceAccountName: string;
        securityContext: { runAsNonRoot: boolean };
        containers: {
          name: string;
          image: string;
          args: string[];
          ports: { name: string; containerPort: number }[];
          livenessProbe: { httpGet: { path: string } };
          readinessProbe: { httpGet: { path: string } };
          securityContext: { readOnlyRootFilesystem: boolean; runAsNonRoot: boolean; allowPrivilegeEscalation: boolean };
        }[];
      };
    };
  };
};

const all = (props = {}): ManifestObject[] => renderInstall(props).flatMap((c) => c.objects);
const deployments = (props = {}): Deployment[] => all(props).filter((o): o is Deployment => o.kind === 'Deployment');

describe('the install', () => {
  it('renders one chart per part, in apply order', () => {
    expect(renderInstall().map((c) => c.name)).toEqual([
      'banlieue-namespace',
      'banlieue-crds',
      'banlieue-capi-infrastructure',
      'banlieue-controller',
      'banlieue-providers',
      'banlieue-admission-policies',
    ]);
  });

  it('runs the controller and one Deployment per cluster-side backend whose role is built, each a hardened manager container', () => {
    const deps = deployments({ registry: 'registry.example.com/team', version: 'v9.9.9' });
    const clusterSide = PROVIDER_ROLES_BUILT.filter((b) => CLUSTER_SIDE_BACKENDS.includes(b));
    expect(deps.map((d) => d.metadata.name).sort()).toEqual(['banlieue-controller', ...clusterSide.map((b) => `banlieue-provider-${b}`)].sort());
    for (const d of deps) {
      const pod = d.spec.template.spec;
      const [container] = pod.containers;
      expect(pod.containers).toHaveLength(1);
      expect(container?.name).toBe('manager');
      expect(container?.image).toBe('registry.example.com/team/banlieue:v9.9.9');
      expect(pod.automountServiceAccountToken).toBe(true);
      expect(pod.serviceAccountName).toBe(d.metadata.name);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(container?.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, allowPrivilegeEscalation: false });
      expect(container?.livenessProbe.httpGet.path).toBe('/livez');
      expect(container?.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container?.ports.map((p) => p.name)).toEqual(['health']);
      expect(container?.args).toContain('--metrics-bind-address=127.0.0.1');
      expect(d.spec.selector.matchLabels).toEqual(
        Object.fromEntries(Object.entries(d.spec.template.metadata.labels).filter(([k]) => k in d.spec.selector.matchLabels)),
      );
      expect(Object.keys(d.spec.template.metadata.labels).some((k) => k.startsWith('cdk8s.io'))).toBe(false);
    }
    const args = Object.fromEntries(deps.map((d) => [d.metadata.name, d.spec.template.spec.containers[0]?.args.slice(0, 2)]));
    expect(args['banlieue-controller']?.[0]).toBe('controller');
    expect(args['banlieue-provider-vsphere']).toEqual(['provider', 'vsphere']);
  });

  const unbuilt = BACKENDS.filter((b) => !PROVIDER_ROLES_BUILT.includes(b));
  it.skipIf(unbuilt.length === 0)('ships no identity, RBAC or Deployment for a provider role this version does not run', () => {
    const objs = all();
    const named = (prefix: string): string[] => objs.filter((o) => o.metadata.name.startsWith(prefix)).map((o) => `${o.kind}/${o.metadata.name}`);
    for (const backend of unbuilt) expect(named(`banlieue-provider-${backend}`), backend).toEqual([]);
    const only = unbuilt.slice(0, 1);
    expect(
      all({ backends: only })
        .filter((o) => o.kind === 'ServiceAccount')
        .map((o) => o.metadata.name),
    ).toEqual(['banlieue-controller']);
    expect(renderInstall({ backends: only }).map((c) => c.name)).not.toContain('banlieue-providers');
  });

  it('gives a role that runs on its hosts (cloud-hypervisor) its ClusterRoles, bound to nobody, and no ServiceAccount or Deployment', () => {
    const named = all()
      .filter((o) => o.metadata.name.startsWith('banlieue-provider-cloud-hypervisor'))
      .map((o) => `${o.kind}/${o.metadata.name}`)
      .sort();
    expect(named).toEqual(['ClusterRole/banlieue-provider-cloud-hypervisor', 'ClusterRole/banlieue-provider-cloud-hypervisor-images']);
  });

  it('installs only the enabled backends', () => {
    expect(deployments({ backends: ['vsphere'] }).map((d) => d.metadata.name)).toEqual(['banlieue-controller', 'banlieue-provider-vsphere']);
    expect(
      all({ backends: ['vsphere'] })
        .filter((o) => o.kind === 'ServiceAccount')
        .map((o) => o.metadata.name),
    ).not.toContain('banlieue-provider-proxmox');
  });

  it('lists as built exactly the provider roles the binary has', () => {
    expect(BACKENDS.filter((b) => BUILT_IN_BACKENDS.withProviderRole().includes(b))).toEqual([...PROVIDER_ROLES_BUILT]);
  });

  it('puts no namespace on cluster-scoped objects and the install namespace on the others', () => {
    for (const o of all({ namespace: 'virt', admissionPolicies: true, networkPolicies: true })) {
      if (CLUSTER_SCOPED.has(o.kind)) expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBeUndefined();
      else expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe('virt');
    }
  });

  it('labels every object cluster.x-k8s.io/provider: infrastructure-banlieue, as clusterctl would (clusterctl provider contract)', () => {
    const everything = all({ admissionPolicies: true, networkPolicies: true, providerNamespaces: ['vms'] });
    expect(new Set(everything.map((o) => o.kind))).toEqual(
      new Set([...CLUSTER_SCOPED, 'ServiceAccount', 'Deployment', 'Role', 'RoleBinding', 'NetworkPolicy']),
    );
    for (const o of everything) expect(o.metadata.labels?.['cluster.x-k8s.io/provider'], `${o.kind} ${o.metadata.name}`).toBe('infrastructure-banlieue');
    // The construct users add to their own cdk8s app too.
    const chart = new Chart(testApp(), 'mine');
    new BanlieueInstall(chart, 'banlieue');
    for (const o of Testing.synth(chart) as ManifestObject[])
      expect(o.metadata.labels?.['cluster.x-k8s.io/provider'], `${o.kind} ${o.metadata.name}`).toBe('infrastructure-banlieue');
  });

  it('names every object explicitly, without hash suffixes', () => {
    for (const o of all({ admissionPolicies: true, networkPolicies: true })) {
      expect(o.metadata.name, o.kind).toMatch(/^(banlieue|[a-z0-9]+\.(banlieue\.io|infrastructure\.banlieue\.io))[a-z0-9.-]*$/);
      expect(o.metadata.name).not.toMatch(/-[0-9a-f]{8}$/);
    }
  });

  it('keeps cluster-scoped objects namespace-free inside a user chart that has a namespace', () => {
    const chart = new Chart(testApp(), 'mine', { namespace: 'apps' });
    new BanlieueInstall(chart, 'banlieue', { backends: ['vsphere'] });
    for (const o of Testing.synth(chart) as ManifestObject[]) {
      if (CLUSTER_SCOPED.has(o.kind)) expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBeUndefined();
    }
  });

  it.each([
    [{ namespace: 'Bad_NS' }, 'namespace "Bad_NS"'],
    [{ providerNamespaces: [] }, 'providerNamespaces: an empty list'],
    [{ providerNamespaces: ['vms', 'Bad_NS'] }, 'providerNamespaces: "Bad_NS"'],
    [{ providerNamespaces: ['vms', 'vms'] }, 'lists a namespace twice'],
    [{ version: 'v1 beta' }, 'version "v1 beta"'],
    [{ registry: 'UPPER/case' }, 'registry "UPPER/case"'],
    [{ backends: ['hyperv'] }, 'backends: "hyperv"'],
    [{ backends: ['vsphere', 'vsphere'] }, 'lists a backend twice'],
  ])('refuses bad props %j naming the prop', (props, message) => {
    expect(() => resolveInstallProps(props as never)).toThrow(message);
    expect(() => new BanlieueInstall(new App(), 'x', props as never)).toThrow(message);
  });

  it('installs the admission policies by default and leaves them out only when asked; network policies only when asked', () => {
    const policies = (props = {}): string[] =>
      all(props)
        .filter((o) => o.kind === 'ValidatingAdmissionPolicy')
        .map((o) => o.metadata.name);
    expect(policies()).toEqual(expect.arrayContaining(['banlieue-provider-references', 'banlieue-inframachine-provider-id', 'banlieue-provider-insecure-tls']));
    expect(all().map((o) => o.kind)).not.toContain('NetworkPolicy');
    expect(all({ networkPolicies: true }).map((o) => o.kind)).toContain('NetworkPolicy');
    // Template immutability is part of the API and the controller's Secret guard least privilege: neither is optional.
    expect(policies({ admissionPolicies: false })).toEqual(['banlieue-template-immutability', 'banlieue-controller-secret-writes']);
  });

  it('binds every policy it installs, refusing what fails', () => {
    const objs = all();
    for (const policy of objs.filter((o) => o.kind === 'ValidatingAdmissionPolicy')) {
      const binding = objs.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding' && o.metadata.name === policy.metadata.name);
      expect(binding?.spec, policy.metadata.name).toEqual({ policyName: policy.metadata.name, validationActions: ['Deny'] });
      expect((policy.spec as { failurePolicy: string }).failurePolicy).toBe('Fail');
    }
  });

  it('serves metrics on loopback unless exposed, and lets the NetworkPolicy admit the metrics port only then', () => {
    const exposed = deployments({ exposeMetrics: true })[0]?.spec.template.spec.containers[0];
    expect(exposed?.args).toContain('--metrics-bind-address=0.0.0.0');
    expect(exposed?.ports.map((p) => p.name)).toEqual(['metrics', 'health']);
    const ingressPorts = (props: object): number[] => {
      const policy = all({ networkPolicies: true, ...props }).find((o) => o.kind === 'NetworkPolicy') as
        { spec: { ingress: { ports: { port: number }[] }[] } } | undefined;
      return (policy?.spec.ingress ?? []).flatMap((rule) => rule.ports.map((p) => p.port));
    };
    expect(ingressPorts({})).toEqual([HEALTH_PORT]);
    expect(ingressPorts({ exposeMetrics: true }).sort()).toEqual([METRICS_PORT, HEALTH_PORT].sort());
  });
});
