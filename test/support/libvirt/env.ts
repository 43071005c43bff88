// The libvirt integration setting, shared by the suites that run machines on
// libvirtd's test driver: a namespace, a private libvirtd (its own mount
// namespace, loopback TCP/TLS), an "anchor" client the test keeps open (the
// test driver's state lives while one connection does, and the test reads
// the host through it), an image volume in its pool, the user's
// Provider/Secret/VMClass/VMImage, and `banlieue controller` and `banlieue
// provider libvirt` as processes against the test API server.
import { inject } from 'vitest';
import type { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import type { Domain, StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import { startLibvirtd, type Libvirtd } from '../../peers/libvirt/libvirtd.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../controller-process.js';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../fixtures.js';
import { createNamespace } from '../kube.js';
import { anchorClient, libvirtWorld, makeImageVolume, TEST_POOL, type LibvirtWorld } from './world.js';

export { anchorClient, IMAGE_VOLUME, libvirtWorld, makeImageVolume, TEST_NETWORK, TEST_POOL, type LibvirtWorld } from './world.js';

const t = new TestApi();

export interface LibvirtEnv {
  readonly ns: string;
  readonly removeNs: () => Promise<void>;
  readonly daemon: Libvirtd;
  /** The test's own connection (unix socket): keeps the test driver's state and reads the host. */
  readonly anchor: LibvirtClient;
  readonly pool: StoragePool;
  readonly world: LibvirtWorld;
  readonly controller: RoleProcess;
  /** Replaced when a test restarts the provider (startLibvirtProvider). */
  provider: RoleProcess;
}

/** `banlieue provider libvirt` for one namespace, polling each second. */
export function libvirtProviderArgs(ns: string, extra: readonly string[] = []): string[] {
  return providerRoleArgs('libvirt', inject('kubeconfig'), ns, 2, extra);
}

export function startLibvirtProvider(env: Pick<LibvirtEnv, 'ns'>): Promise<RoleProcess> {
  return startRole(libvirtProviderArgs(env.ns));
}

export async function startLibvirtEnv(prefix: string): Promise<LibvirtEnv> {
  const suffix = Math.random().toString(36).slice(2, 7);
  const { name: ns, remove: removeNs } = await createNamespace(prefix);
  const daemon = await startLibvirtd();
  const anchor = await anchorClient(daemon);
  const pool = await anchor.pools.lookupByName(TEST_POOL);
  await makeImageVolume(anchor, pool);
  const world = libvirtWorld(ns, daemon, `${prefix}-${suffix}`);
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
  const controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
  const provider = await startLibvirtProvider({ ns });
  await t.condition(world.provider, 'Ready', 'True', 'Reconciled', 60_000);
  return { ns, removeNs, daemon, anchor, pool, world, controller, provider };
}

export async function stopLibvirtEnv(env: LibvirtEnv | undefined): Promise<void> {
  if (!env) return;
  try {
    // Machines first, while the provider still runs to take their finalizers off.
    await t.deleteVirtualMachines(env.ns);
  } finally {
    await env.controller.stop();
    await env.provider.stop();
    await env.anchor.close();
    await env.daemon.stop();
    for (const obj of [env.world.vmClass, env.world.vmImage]) await t.delete(obj);
    await env.removeNs();
  }
}

/** The UUID in a `libvirt://<uuid>` providerID. */
export function uuidOf(providerID: string): string {
  return providerID.replace(/^libvirt:\/\//, '');
}

/** The LibvirtMachine's UUID, once its spec carries a providerID. */
export async function libvirtUuidOf(ns: string, name: string, timeoutMs = 60_000): Promise<string> {
  const m = await t.exists(machineRef('libvirt', ns, name), (o) => typeof o.spec?.providerID === 'string', timeoutMs);
  return uuidOf(m.spec?.providerID as string);
}

/** The domain with this UUID, or undefined. */
export async function domainOf(anchor: LibvirtClient, uuid: string): Promise<Domain | undefined> {
  return anchor.domains.lookupByUuid(uuid).catch(() => undefined);
}

/** Names of the domains (and of the volumes in `pool`) whose name starts with `prefix`. */
export async function domainsNamed(anchor: LibvirtClient, prefix: string): Promise<string[]> {
  return (await anchor.domains.list())
    .map((d) => d.name)
    .filter((n) => n.startsWith(prefix))
    .sort();
}

export async function volumesOf(anchor: LibvirtClient, pool: StoragePool, uuid: string): Promise<string[]> {
  return (await anchor.pools.listVolumes(pool))
    .map((v) => v.name)
    .filter((n) => n.startsWith(`${uuid}-`))
    .sort();
}

/** The LibvirtMachines of a namespace, as the API has them now. */
export async function libvirtMachines(ns: string): Promise<Obj[]> {
  return (await t.api.request<{ items: Obj[] }>('GET', `/apis/${INFRA}/namespaces/${ns}/libvirtmachines`)).items;
}

/** A VirtualMachine of the env's class and image. */
export function libvirtVm(env: Pick<LibvirtEnv, 'ns' | 'world'>, name: string, spec: Record<string, unknown> = {}): Obj {
  return vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, spec);
}
