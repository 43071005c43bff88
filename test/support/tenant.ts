// A hostile tenant of the default install: a ServiceAccount with a real token
// and a user impersonated with --as/--as-group, both bound to a Role that lets
// them write banlieue's tenant-facing kinds and ConfigMaps in their namespace
// but read no Secret there. Their requests go through kubectl, as a tenant's
// would, and come back as what kubectl prints: nothing when the API server
// admitted them, its refusal otherwise.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { banlieueCommand } from './bundles.js';
import type { Obj } from './fixtures.js';
import { testKubeConfig } from './kube.js';

/** The namespace `banlieue bootstrap operator` installs into by default. */
export const INSTALL_NS = 'banlieue-system';

export interface KubectlRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Who a request is made as: kubectl flags on top of the admin kubeconfig. */
export interface Identity {
  /** The username the API server sees. */
  readonly username: string;
  readonly flags: readonly string[];
}

/** The admin of the test cluster (system:masters). */
export const clusterAdmin: Identity = { username: 'banlieue-test-admin', flags: [] };

/** A user the admin impersonates, as `kubectl --as … --as-group …`. */
export function impersonated(username: string, groups: readonly string[] = []): Identity {
  return { username, flags: [`--as=${username}`, ...groups.map((g) => `--as-group=${g}`)] };
}

/** A ServiceAccount, impersonated (the API server adds its groups). */
export function impersonatedServiceAccount(ns: string, name: string): Identity {
  return impersonated(`system:serviceaccount:${ns}:${name}`);
}

/** A ServiceAccount authenticated by a token the API server issued for it. */
export async function serviceAccountIdentity(ns: string, name: string): Promise<Identity> {
  return { username: `system:serviceaccount:${ns}:${name}`, flags: [`--token=${await serviceAccountToken(ns, name)}`] };
}

/** `kubectl <args>` as `who`, against the test API server. */
export function kubectlAs(who: Identity, args: readonly string[], input?: string): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const child = spawn(inject('kubectl'), [`--kubeconfig=${inject('kubeconfig')}`, ...who.flags, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** What kubectl printed for a refused request; undefined when it went through. */
function refusalOf(run: KubectlRun): string | undefined {
  return run.code === 0 ? undefined : (run.stderr || run.stdout).trim();
}

/** One identity's requests, each resolving to the API server's refusal or undefined when admitted. */
export class Actor {
  constructor(readonly identity: Identity) {}

  get username(): string {
    return this.identity.username;
  }

  /** `kubectl create`; with `dryRun`, admitted or refused as it would be but never stored. */
  async create(obj: Obj | Record<string, unknown>, options: { dryRun?: boolean } = {}): Promise<string | undefined> {
    const args = ['create', '-f', '-', ...(options.dryRun ? ['--dry-run=server'] : [])];
    return refusalOf(await kubectlAs(this.identity, args, JSON.stringify(obj)));
  }

  /** A JSON merge patch of `obj`. */
  async patch(obj: Pick<Obj, 'kind' | 'apiVersion' | 'metadata'>, body: unknown, subresource?: string): Promise<string | undefined> {
    const args = ['patch', resourceOf(obj), obj.metadata.name, '-n', obj.metadata.namespace ?? '', '--type=merge', '-p', JSON.stringify(body)];
    return refusalOf(await kubectlAs(this.identity, subresource ? [...args, `--subresource=${subresource}`] : args));
  }

  async delete(obj: Pick<Obj, 'kind' | 'apiVersion' | 'metadata'>): Promise<string | undefined> {
    return refusalOf(await kubectlAs(this.identity, ['delete', resourceOf(obj), obj.metadata.name, '-n', obj.metadata.namespace ?? '', '--wait=false']));
  }

  /** The object as this identity reads it; rejects with kubectl's message when it may not. */
  async get<T = Obj>(obj: Pick<Obj, 'kind' | 'apiVersion' | 'metadata'>): Promise<T> {
    const run = await kubectlAs(this.identity, ['get', resourceOf(obj), obj.metadata.name, '-n', obj.metadata.namespace ?? '', '-o', 'json']);
    if (run.code !== 0) throw new Error(run.stderr.trim());
    return JSON.parse(run.stdout) as T;
  }

  /** `kubectl auth can-i <verb> <resource> [--subresource …]` in `ns`. */
  async can(verb: string, resource: string, ns: string, subresource?: string): Promise<boolean> {
    const args = ['auth', 'can-i', verb, resource, '-n', ns, ...(subresource ? [`--subresource=${subresource}`] : [])];
    return (await kubectlAs(this.identity, args)).stdout.trim() === 'yes';
  }
}

/** kubectl's name for a kind: `virtualmachines.banlieue.io`, `secrets`. */
function resourceOf(obj: Pick<Obj, 'kind' | 'apiVersion'>): string {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0] : '';
  const plural = `${obj.kind.toLowerCase()}s`;
  return group ? `${plural}.${group}` : plural;
}

/** `banlieue <args> --kubeconfig <kubeconfig>`, as a cluster admin runs it (default: the suites' cluster's admin). */
export async function banlieueAsAdmin(args: readonly string[], kubeconfig = inject('kubeconfig')): Promise<KubectlRun> {
  const [node, command] = await banlieueCommand([...args, '--kubeconfig', kubeconfig]);
  return new Promise<KubectlRun>((resolve) => {
    const child = spawn(node, command, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `banlieue bootstrap operator` with its defaults (admission policies on), as a cluster admin
 * runs it, but --wait=false: the test cluster has no node, its Deployments never roll out.
 */
export async function installDefault(): Promise<void> {
  const run = await banlieueAsAdmin(['bootstrap', 'operator', '--wait=false']);
  if (run.code !== 0) throw new Error(`banlieue bootstrap operator exited ${run.code}:\n${run.stderr}`);
}

/** A token the API server issues for ServiceAccount ns/name (TokenRequest, one hour). */
export async function serviceAccountToken(ns: string, name: string): Promise<string> {
  const api = new KubeApi(testKubeConfig());
  const review = await api.request<{ status?: { token?: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  if (!review.status?.token) throw new Error(`no token issued for ${ns}/${name}`);
  return review.status.token;
}

/** A kubeconfig file for ServiceAccount ns/name, so that a role process runs with exactly the install's RBAC. */
export async function serviceAccountKubeconfig(ns: string, name: string): Promise<string> {
  const admin = testKubeConfig();
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('the test kubeconfig has no cluster');
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: await serviceAccountToken(ns, name) }],
    contexts: [{ name, cluster: cluster.name, user: name }],
    currentContext: name,
  });
  // Beside the test kubeconfig, in the control plane's directory: gone with it.
  const dir = join(dirname(inject('kubeconfig')), 'service-accounts');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${ns}-${name}.kubeconfig`);
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}

export interface Tenant {
  readonly ns: string;
  /** ServiceAccount `tenant` of the namespace, with a real token. */
  readonly serviceAccount: Actor;
  /** A user of the tenant's group, impersonated. */
  readonly user: Actor;
  /** Both, for attacks each of them must fail at. */
  readonly actors: readonly Actor[];
}

/** The kinds a tenant writes (banlieue's namespaced, tenant-facing ones) and may see. */
const TENANT_RULES = [
  { apiGroups: ['banlieue.io'], resources: ['virtualmachines', 'providers'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  {
    apiGroups: ['infrastructure.banlieue.io'],
    resources: ['vspheremachines', 'vspheremachinetemplates', 'vsphereclusters', 'vsphereclustertemplates'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  // Seeing what happened, as `kubectl describe` does; and the CAPI objects of the namespace.
  { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['cluster.x-k8s.io'], resources: ['machines', 'clusters'], verbs: ['get', 'list', 'watch'] },
];

/**
 * ServiceAccount `tenant` and group `tenants:<ns>` (user `mallory@<ns>`) bound to
 * Role `tenant` in `ns`: no Secret of the namespace is theirs to read.
 */
export async function createTenant(ns: string): Promise<Tenant> {
  const api = new KubeApi(testKubeConfig());
  const group = `tenants:${ns}`;
  await api.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant' } } });
  await api.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'tenant' }, rules: TENANT_RULES },
  });
  await api.request('POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'tenant' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant' },
      subjects: [
        { kind: 'ServiceAccount', name: 'tenant', namespace: ns },
        { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group },
      ],
    },
  });
  const serviceAccount = new Actor(await serviceAccountIdentity(ns, 'tenant'));
  const user = new Actor(impersonated(`mallory@${ns}`, [group]));
  return { ns, serviceAccount, user, actors: [serviceAccount, user] };
}
