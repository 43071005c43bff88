// The Cloud Hypervisor integration setting: a test host (temp directories, a
// network namespace of the test's own with a bridge, an image, the simulator as
// the VMM: cloud-hypervisor-host.ts), a namespace with the user's Provider,
// VMClass and VMImage, and `banlieue controller` and `banlieue provider
// cloud-hypervisor` as processes against the test API server. The provider runs
// as on a host: it reads its host config from BANLIEUE_CH_HOST_CONFIG, makes
// taps in the test's namespace and starts the VMMs there.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderHostInstall } from '../../../controller/cli/host-install.js';
import { KubeApi } from '../../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../../controller/runtime/server-side-apply.js';
import { FieldManager } from '../../../infra/api/well-known.js';
import { HostRoleRules } from '../../../infra/install/host-role-rules.js';
import { renderInstall } from '../../../infra/install/render.js';
import type { SimulatorOptions } from '../../peers/cloud-hypervisor/vmm-peers.js';
import { simulatorPeer } from '../../peers/cloud-hypervisor/vmm-peers.js';
import { chWorld, createTestHost, hostConfigEnv, type TestHost } from './host.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../controller-process.js';
import { INFRA, TestApi, vm, type Obj } from '../fixtures.js';
import { createNamespace, testKubeConfig } from '../kube.js';

const t = new TestApi();

export interface ChEnv {
  readonly ns: string;
  readonly removeNs: () => Promise<void>;
  readonly host: TestHost;
  readonly world: { readonly provider: Obj; readonly vmClass: Obj; readonly vmImage: Obj };
  readonly controller: RoleProcess;
  /** Replaced when a test restarts the provider (startChProvider). */
  provider: RoleProcess;
  /** The provider's kubeconfig: the host's identity (asHost) or the test's admin one. */
  readonly kubeconfig: string;
}

export interface ChEnvOptions {
  /**
   * Run the provider as the host's own identity: the install's ClusterRoles and the
   * RBAC `banlieue host install` prints are applied, a token is minted for the host's
   * ServiceAccount, and the provider runs with a kubeconfig holding only it.
   * @default false: the test's admin kubeconfig
   */
  readonly asHost?: boolean;
  readonly simulator?: SimulatorOptions;
  readonly providerFlags?: readonly string[];
  readonly capacity?: { maxMemoryUsedPercent?: number; minStorageFreeGiB?: number };
  /** @default 1 (createTestHost's) */
  readonly powerOffGraceSeconds?: number;
}

/** `banlieue provider cloud-hypervisor` for one namespace, polling each second. */
export function chProviderArgs(ns: string, kubeconfig: string, extra: readonly string[] = []): string[] {
  return providerRoleArgs('cloud-hypervisor', kubeconfig, ns, 5, extra);
}

/** Starts the provider role with the host's config in its environment. */
export function startChProvider(env: Pick<ChEnv, 'ns' | 'host' | 'kubeconfig'>, extra: readonly string[] = []): Promise<RoleProcess> {
  return startRole(chProviderArgs(env.ns, env.kubeconfig, extra), { env: hostConfigEnv(env.host) });
}

export async function startChEnv(prefix: string, options: ChEnvOptions = {}): Promise<ChEnv> {
  const suffix = Math.random().toString(36).slice(2, 7);
  const { name: ns, remove: removeNs } = await createNamespace(prefix);
  const host = await createTestHost(simulatorPeer, {
    simulator: { guest: 'acpi', ...options.simulator },
    ...(options.capacity ? { capacity: options.capacity } : {}),
    ...(options.powerOffGraceSeconds === undefined ? {} : { powerOffGraceSeconds: options.powerOffGraceSeconds }),
  });
  const world = chWorld(ns, host, suffix);
  try {
    for (const obj of [world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
    const kubeconfig = options.asHost ? await hostKubeconfig(ns, host, world.provider.metadata.name) : inject('kubeconfig');
    const controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
    const provider = await startChProvider({ ns, host, kubeconfig }, options.providerFlags);
    return { ns, removeNs, host, world, controller, provider, kubeconfig };
  } catch (error) {
    await host.remove();
    await removeNs();
    throw error;
  }
}

export async function stopChEnv(env: ChEnv | undefined): Promise<void> {
  if (!env) return;
  try {
    await t.deleteVirtualMachines(env.ns);
  } finally {
    await env.controller.stop();
    await env.provider.stop();
    for (const obj of [env.world.vmClass, env.world.vmImage]) await t.delete(obj);
    await env.removeNs();
    await env.host.remove();
  }
}

/** A VirtualMachine of the env's class and image with a static address on eth0. */
export function chVm(env: ChEnv, name: string, address: string, spec: Record<string, unknown> = {}): Obj {
  return vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, {
    networkOverrides: [{ name: 'eth0', static: { address, prefix: 24 } }],
    ...spec,
  });
}

/** The CloudHypervisorMachines of a namespace. */
export async function chMachines(ns: string): Promise<Obj[]> {
  return (await t.api.request<{ items: Obj[] }>('GET', `/apis/${INFRA}/namespaces/${ns}/cloudhypervisormachines`)).items;
}

/** The UUID in a `cloudhypervisor://<uuid>` providerID. */
export function chUuidOf(providerID: string): string {
  return providerID.replace(/^cloudhypervisor:\/\//, '');
}

/**
 * The host's own identity, as a cluster admin sets it up: the install's ClusterRoles
 * for the backend (applied as `banlieue bootstrap operator` applies them, so a later
 * install finds them as its own), the RBAC `banlieue host install` renders for this
 * host and Provider, and a kubeconfig with a token of the host's ServiceAccount.
 */
export async function hostKubeconfig(ns: string, host: TestHost, provider: string): Promise<string> {
  const admin = testKubeConfig();
  const api = new KubeApi(admin);
  const bootstrap = new ServerSideApply(api, FieldManager.bootstrap);
  const names = Object.values(HostRoleRules.namesOf('cloud-hypervisor'));
  const clusterRoles = renderInstall({ backends: ['cloud-hypervisor'] })
    .flatMap((c) => c.objects)
    .filter((o) => o.kind === 'ClusterRole' && names.includes(o.metadata.name));
  if (clusterRoles.length !== names.length) throw new Error(`the install renders ${clusterRoles.length} of the host ClusterRoles ${names.join(', ')}`);
  for (const role of clusterRoles) await bootstrap.apply(role);
  const install = renderHostInstall({
    provider,
    namespace: ns,
    hostName: host.config.hostName,
    kubeconfig: join(host.dir, 'kubeconfig'),
    configPath: host.configPath,
    stateRoot: host.config.stateRoot,
    imageDir: host.config.imageDir,
    vmmBinary: host.config.vmm.binary,
    storageClasses: host.config.storageClasses,
    networkClasses: host.config.networkClasses,
    banlieue: 'banlieue',
  });
  const rbac = install.files.find((f) => f.path.endsWith(`rbac-${host.config.hostName}.yaml`));
  if (!rbac) throw new Error('host install rendered no RBAC');
  const user = new ServerSideApply(api, 'banlieue-test-admin');
  for (const doc of parseAllDocuments(rbac.content)) await user.apply(doc.toJS() as Obj);
  const account = `banlieue-host-${host.config.hostName}`;
  const token = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({ name: account, namespace: ns, body: { spec: { audiences: [] } } });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !token.status?.token) throw new Error(`no token for ${account}`);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name: account, token: token.status.token }],
    contexts: [{ name: account, cluster: cluster.name, user: account }],
    currentContext: account,
  });
  const path = join(host.dir, 'kubeconfig');
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}
