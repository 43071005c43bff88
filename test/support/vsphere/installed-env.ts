// The vSphere setting of vsphere-env.ts on the default install: `banlieue
// bootstrap operator` applied (admission policies on), and `banlieue controller`
// and `banlieue provider vsphere` running as the install's ServiceAccounts, so
// that its RBAC and admission policies bind them as they would in a cluster.
import { startVcsim } from '../../peers/vsphere/vcsim.js';
import { providerRoleArgs, startRole } from '../controller-process.js';
import { TestApi, type Obj } from '../fixtures.js';
import { createNamespace } from '../kube.js';
import { INSTALL_NS, installDefault, serviceAccountKubeconfig } from '../tenant.js';
import type { VsphereEnv } from './env.js';
import { makeTemplate, vcsimClient, vsphereWorld } from './world.js';

const t = new TestApi();

export interface InstalledVsphereEnvOptions {
  /** The Provider's CA bundle from a Secret (`vcsim-ca`, key ca.crt) instead of inline. @default false */
  readonly caFromSecret?: boolean;
  /** Extra provider flags, e.g. `['--resync-period', '2']`. */
  readonly providerFlags?: readonly string[];
}

/** `banlieue provider vsphere` for one namespace as its ServiceAccount, polling each second. */
export async function installedProviderArgs(ns: string, extra: readonly string[] = []): Promise<string[]> {
  const kubeconfig = await serviceAccountKubeconfig(INSTALL_NS, 'banlieue-provider-vsphere');
  return providerRoleArgs('vsphere', kubeconfig, ns, 5, extra);
}

/** Stop with stopVsphereEnv (vsphere-env.ts). */
export async function startInstalledVsphereEnv(prefix: string, options: InstalledVsphereEnvOptions = {}): Promise<VsphereEnv> {
  await installDefault();
  const suffix = Math.random().toString(36).slice(2, 7);
  const template = `ubuntu-${suffix}`;
  const { name: ns, remove: removeNs } = await createNamespace(prefix);
  const vcsim = await startVcsim({ datacenters: 2, clusters: 2 });
  const client = await vcsimClient(vcsim);
  await makeTemplate(client, template);
  const base = vsphereWorld(ns, vcsim, `${prefix}-${suffix}`, template);
  const world = options.caFromSecret ? { ...base, provider: withCaFromSecret(base.provider) } : base;
  if (options.caFromSecret)
    await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'vcsim-ca', namespace: ns }, stringData: { 'ca.crt': vcsim.caPem } });
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
  const providerFlags = options.providerFlags ?? [];
  const controllerKubeconfig = await serviceAccountKubeconfig(INSTALL_NS, 'banlieue-controller');
  const controller = await startRole(['controller', '--kubeconfig', controllerKubeconfig, '--no-leader-elect', '--namespace', ns]);
  const provider = await startRole(await installedProviderArgs(ns, providerFlags));
  await t.condition(world.provider, 'Ready', 'True', undefined, 60_000);
  return { ns, removeNs, vcsim, client, world, controller, provider, providerFlags };
}

function withCaFromSecret(provider: Obj): Obj {
  const spec = provider.spec ?? {};
  return { ...provider, spec: { ...spec, connection: { ...spec.connection, caBundle: { secretRef: { name: 'vcsim-ca', key: 'ca.crt' } } } } };
}
