// `banlieue bootstrap operator` against the real API server, as a user runs it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { describe, expect, inject, it } from 'vitest';
import { ALL_KINDS } from '../../infra/api/kinds.js';
import { crdName } from '../../infra/api/kind.js';
import { toCustomResourceDefinition } from '../../infra/crds/custom-resource-definition.js';
import { banlieueCommand } from '../support/bundles.js';
import { freePort } from '../support/control-plane.js';
import { apply, createNamespace, testKubeConfig } from '../support/kube.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], input?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

const banlieue = async (...args: string[]): Promise<Run> => run(...(await banlieueCommand(args)));

function writeKubeconfig(kc: KubeConfig, name: string): string {
  const path = join(tmpdir(), `banlieue-${name}-${process.pid}.kubeconfig`);
  writeFileSync(path, kc.exportConfig());
  return path;
}

describe('banlieue bootstrap operator', () => {
  const kubeconfig = inject('kubeconfig');

  it('applies the install in dependency order and every CRD becomes Established', async () => {
    const result = await banlieue('bootstrap', 'operator', '--wait=false', '--kubeconfig', kubeconfig, '--version', 'v0.0.0-test');
    expect(result.stderr, JSON.stringify(result)).toContain('applied Namespace banlieue-system');
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stderr.split('\n').filter((l) => l.includes('applied'));
    expect(lines[0]).toContain('Namespace banlieue-system');
    expect(lines.findIndex((l) => l.includes('CustomResourceDefinition'))).toBeLessThan(lines.findIndex((l) => l.includes('Deployment')));

    const kc = testKubeConfig();
    const crds = await kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition({ labelSelector: 'app.kubernetes.io/part-of=banlieue' });
    expect(crds.items.map((c) => c.metadata?.name).sort()).toEqual(ALL_KINDS.map(crdName).sort());
    for (const crd of crds.items) {
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status, crd.metadata?.name).toBe('True');
    }
    // The live schemas are exactly the rendered ones: nothing (enum, default,
    // x-kubernetes-validations) was dropped on the way.
    const live = JSON.parse(
      (await run(inject('kubectl'), ['--kubeconfig', kubeconfig, 'get', 'crd', '-l', 'app.kubernetes.io/part-of=banlieue', '-o', 'json'])).stdout,
    ) as {
      items: { metadata: { name: string }; spec: { versions: unknown[] } }[];
    };
    for (const def of ALL_KINDS) {
      const rendered = toCustomResourceDefinition(def);
      expect(live.items.find((c) => c.metadata.name === rendered.metadata.name)?.spec.versions, rendered.metadata.name).toEqual(rendered.spec.versions);
    }
    const deployment = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'banlieue-controller', namespace: 'banlieue-system' });
    expect(deployment.spec?.template.spec?.containers[0]?.image).toBe('ghcr.io/banlieue/banlieue:v0.0.0-test');
    expect(deployment.metadata?.managedFields?.map((m) => m.manager)).toContain('banlieue.io/bootstrap');
  });

  it('is idempotent: a second run succeeds and changes nothing', async () => {
    const rbac = testKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const before = await rbac.readClusterRole({ name: 'banlieue-capi-infrastructure' });
    const result = await banlieue('bootstrap', 'operator', '--wait=false', '--kubeconfig', kubeconfig, '--version', 'v0.0.0-test');
    expect(result.code, result.stderr).toBe(0);
    const after = await rbac.readClusterRole({ name: 'banlieue-capi-infrastructure' });
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });

  it('upgrades an older install whose banlieue-controller ClusterRole carries the CAPI aggregation label set by another field manager: the label goes, the rest stays', async () => {
    const rbac = testKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const AGGREGATE = 'cluster.x-k8s.io/aggregate-to-manager';
    // As an older release left it: the same role, labelled for CAPI's manager, written by
    // another installer (its own field manager), with a label of the operator's own.
    await apply(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'banlieue-controller', labels: { [AGGREGATE]: 'true', 'example.com/team': 'platform' } },
        rules: [{ apiGroups: ['banlieue.io'], resources: ['virtualmachines'], verbs: ['get'] }],
      },
      'old-installer',
    );
    const old = await rbac.readClusterRole({ name: 'banlieue-controller' });
    expect(old.metadata?.labels?.[AGGREGATE]).toBe('true');
    expect(old.metadata?.managedFields?.find((m) => m.manager === 'old-installer')).toBeDefined();

    const result = await banlieue('bootstrap', 'operator', '--wait=false', '--kubeconfig', kubeconfig, '--version', 'v0.0.0-test');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`removed label ${AGGREGATE} from ClusterRole banlieue-controller`);
    const upgraded = await rbac.readClusterRole({ name: 'banlieue-controller' });
    expect(Object.keys(upgraded.metadata?.labels ?? {})).not.toContain(AGGREGATE);
    expect(upgraded.metadata?.labels).toMatchObject({ 'example.com/team': 'platform', 'app.kubernetes.io/component': 'controller' });
    // The role CAPI is meant to aggregate keeps its label.
    const capiRole = await rbac.readClusterRole({ name: 'banlieue-capi-infrastructure' });
    expect(capiRole.metadata?.labels?.[AGGREGATE]).toBe('true');
  });

  it('names the object and the cause when the cluster is unreachable', async () => {
    const kc = testKubeConfig();
    const port = await freePort();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('no cluster');
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ ...cluster, name: 'gone', server: `https://127.0.0.1:${port}` }],
      users: kc.users,
      contexts: [{ name: 'gone', cluster: 'gone', user: kc.getCurrentUser()?.name ?? '' }],
      currentContext: 'gone',
    });
    const result = await banlieue('bootstrap', 'operator', '--wait=false', '--kubeconfig', writeKubeconfig(unreachable, 'unreachable'));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`applying Namespace banlieue-system: cannot reach the cluster at https://127.0.0.1:${port}`);
  });

  it('names the object and the cause when the user is forbidden', async () => {
    const kc = testKubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'nobody' } } }).catch(() => undefined);
    const token = await core.createNamespacedServiceAccountToken({ name: 'nobody', namespace: 'default', body: { spec: { audiences: [] } } });
    const nobody = new KubeConfig();
    const cluster = kc.getCurrentCluster();
    if (!cluster || !token?.status?.token) throw new Error('no token');
    nobody.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'nobody', token: token.status.token }],
      contexts: [{ name: 'nobody', cluster: cluster.name, user: 'nobody' }],
      currentContext: 'nobody',
    });
    const result = await banlieue('bootstrap', 'operator', '--wait=false', '--kubeconfig', writeKubeconfig(nobody, 'nobody'));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/applying Namespace banlieue-system: forbidden: .*system:serviceaccount:default:nobody/);
  });

  it("leaves the optional admission policies out only when asked, never the controller's Secret guard nor the API's template immutability", async () => {
    const names = (yaml: string): string[] =>
      [...yaml.matchAll(/^kind: ValidatingAdmissionPolicy\nmetadata:\n(?:  .*\n)*?  name: (\S+)$/gm)].map((m) => m[1] ?? '');
    const byDefault = await banlieue('bootstrap', 'operator', '--dry-run');
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(names(byDefault.stdout)).toEqual(
      expect.arrayContaining(['banlieue-controller-secret-writes', 'banlieue-provider-references', 'banlieue-inframachine-provider-id']),
    );
    const optedOut = await banlieue('bootstrap', 'operator', '--dry-run', '--no-admission-policies');
    expect(optedOut.code, optedOut.stderr).toBe(0);
    expect(names(optedOut.stdout).sort()).toEqual(['banlieue-controller-secret-writes', 'banlieue-template-immutability']);
  });

  it('scopes provider credentials to --provider-namespaces and refuses a bad namespace naming the prop', async () => {
    const scoped = await banlieue('bootstrap', 'operator', '--dry-run', '--provider-namespaces', 'vms-a,vms-b');
    expect(scoped.code, scoped.stderr).toBe(0);
    // Per namespace: the Role's name, the RoleBinding's name and its roleRef.
    expect(scoped.stdout.match(/^  name: banlieue-provider-vsphere-credentials$/gm)).toHaveLength(6);
    for (const ns of ['vms-a', 'vms-b']) expect(scoped.stdout).toContain(`name: banlieue-provider-vsphere-credentials\n  namespace: ${ns}`);
    const bad = await banlieue('bootstrap', 'operator', '--dry-run', '--provider-namespaces', 'Bad_NS');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('providerNamespaces: "Bad_NS" is not a valid namespace name');
  });

  it('prints a dry run that kubectl accepts, client- and server-side', async () => {
    // Server-side dry runs need the target namespace to exist.
    const ns = await createNamespace('dry-run');
    const dryRun = await banlieue(
      'bootstrap',
      'operator',
      '--dry-run',
      '--namespace',
      ns.name,
      '--network-policies',
      '--expose-metrics',
      '--provider-namespaces',
      ns.name,
    );
    expect(dryRun.code, dryRun.stderr).toBe(0);
    const kubectl = inject('kubectl');
    for (const mode of ['client', 'server']) {
      const applied = await run(kubectl, ['--kubeconfig', kubeconfig, 'apply', `--dry-run=${mode}`, '-f', '-'], dryRun.stdout);
      expect(
        applied.code,
        `${mode}: ${applied.stderr
          .split('\n')
          .filter((l) => !l.startsWith('Warning:'))
          .join('\n')}`,
      ).toBe(0);
      expect(applied.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/virtualmachines.banlieue.io');
      expect(applied.stdout).toContain(`deployment.apps/banlieue-controller`);
    }
    await ns.remove();
  });
});
