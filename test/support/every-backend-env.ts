// Every backend at once in one namespace: vcsim with a template, the PVE
// simulator, a private libvirtd (test driver) and a Cloud Hypervisor test host
// (simulated VMMs), each world's Provider/Secret/VMClass/VMImage, one
// `banlieue controller` and one `banlieue provider <backend>` per backend, all
// against the test API server. For suites that need every provider running at
// the same time (the hostile corpus); a suite about one backend uses that
// backend's own env.
import { inject } from 'vitest';
import { BACKEND_APIS, type BackendName } from '../../infra/api/backends.js';
import { ConditionType } from '../../infra/api/conditions.js';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { startLibvirtd, type Libvirtd } from '../peers/libvirt/libvirtd.js';
import { simulatorPeer } from '../peers/cloud-hypervisor/vmm-peers.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { startProxmoxSim, type ProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import { chProviderArgs } from './cloud-hypervisor/env.js';
import { chWorld, createTestHost, hostConfigEnv, type TestHost } from './cloud-hypervisor/host.js';
import { startRole, type RoleProcess } from './controller-process.js';
import { TestApi, type Obj } from './fixtures.js';
import { createNamespace } from './kube.js';
import { libvirtProviderArgs } from './libvirt/env.js';
import { anchorClient, libvirtWorld, makeImageVolume, TEST_POOL } from './libvirt/world.js';
import { proxmoxProviderArgs } from './proxmox/env.js';
import { proxmoxWorld } from './proxmox/world.js';
import { providerArgs } from './vsphere/env.js';
import { makeTemplate, vcsimClient, vsphereWorld } from './vsphere/world.js';

const t = new TestApi();

/**
 * The backends this env runs, each in a world of its own test peer. Every
 * backend whose provider role is built must be one: the env refuses to start
 * otherwise, so a new backend's peer joins it when its provider role lands.
 */
export const ENV_BACKENDS = ['vsphere', 'proxmox', 'libvirt', 'cloud-hypervisor'] as const satisfies readonly BackendName[];
export type EnvBackend = (typeof ENV_BACKENDS)[number];

/** The backends whose provider role is built but that this env has no world for. */
export function backendsWithoutWorld(): string[] {
  return BACKEND_APIS.filter((b) => b.providerRoleBuilt && !(ENV_BACKENDS as readonly string[]).includes(b.name)).map((b) => b.name);
}

/** What a user wrote for one backend: its Provider (and Secret, when it takes one), VMClass and VMImage. */
export interface BackendWorld {
  readonly secret?: Obj;
  readonly provider: Obj;
  readonly vmClass: Obj;
  readonly vmImage: Obj;
}

export interface BackendRun {
  readonly world: BackendWorld;
  readonly provider: RoleProcess;
  /** The first failure domain its Provider published. */
  readonly failureDomain: string;
}

export interface EveryBackendEnv {
  readonly ns: string;
  readonly controller: RoleProcess;
  readonly runs: Readonly<Record<EnvBackend, BackendRun>>;
  readonly vcsim: Vcsim;
  readonly vsphereClient: VsphereClient;
  readonly proxmoxSim: ProxmoxSim;
  readonly libvirtd: Libvirtd;
  /** The test's own libvirt connection: the test driver's state lives while one does. */
  readonly libvirtAnchor: LibvirtClient;
  readonly chHost: TestHost;
  /** Stops the roles and the peers, deletes the worlds and the namespace. */
  readonly stop: () => Promise<void>;
}

export interface EveryBackendEnvOptions {
  /** Flags every provider role runs with beyond its env's defaults, e.g. a poll period. */
  readonly providerFlags?: readonly string[];
}

/** Everything started so far, undone last first, each step even when one before it failed. */
class Teardown {
  private readonly steps: (() => Promise<unknown>)[] = [];
  add(step: () => Promise<unknown>): void {
    this.steps.unshift(step);
  }
  async run(): Promise<void> {
    for (const step of this.steps.splice(0)) await step().catch((err: unknown) => console.log(`teardown: ${String(err)}`));
  }
}

async function publishedFailureDomain(provider: Obj, role: RoleProcess): Promise<string> {
  const ready = await t.condition(provider, ConditionType.Ready, 'True', 'Reconciled', 120_000).catch(async (err: unknown) => {
    const now = await t.get(provider);
    throw new Error(`${String(err)}; its status: ${JSON.stringify(now?.status)}; the role's log ends:\n${role.logs().slice(-4000)}`);
  });
  const name = (ready.status?.failureDomains as { name: string }[] | undefined)?.[0]?.name;
  if (!name) throw new Error(`Provider ${provider.metadata.name} published no failure domain`);
  return name;
}

export async function startEveryBackendEnv(prefix: string, options: EveryBackendEnvOptions = {}): Promise<EveryBackendEnv> {
  const teardown = new Teardown();
  const suffix = Math.random().toString(36).slice(2, 7);
  const extra = options.providerFlags ?? [];
  const missing = backendsWithoutWorld();
  if (missing.length > 0) throw new Error(`the every-backend env has no world for ${missing.join(', ')}: add its test peer here`);
  try {
    const { name: ns, remove: removeNs } = await createNamespace(prefix);
    teardown.add(removeNs);

    const vcsim = await startVcsim({ datacenters: 2, clusters: 2 });
    teardown.add(() => vcsim.stop());
    const vsphereClient = await vcsimClient(vcsim);
    teardown.add(() => vsphereClient.close());
    const template = `ubuntu-${suffix}`;
    await makeTemplate(vsphereClient, template);

    const proxmoxSim = await startProxmoxSim({ taskDelayMs: { qmclone: 1_000, default: 200 } });
    teardown.add(() => proxmoxSim.stop());

    const libvirtd = await startLibvirtd();
    teardown.add(() => libvirtd.stop());
    const libvirtAnchor = await anchorClient(libvirtd);
    teardown.add(() => libvirtAnchor.close());
    await makeImageVolume(libvirtAnchor, await libvirtAnchor.pools.lookupByName(TEST_POOL));

    const chHost = await createTestHost(simulatorPeer, { simulator: { guest: 'acpi' } });
    teardown.add(() => chHost.remove());

    const worlds: Record<EnvBackend, BackendWorld> = {
      vsphere: vsphereWorld(ns, vcsim, `${prefix}-${suffix}`, template),
      proxmox: proxmoxWorld(ns, proxmoxSim, `${prefix}-${suffix}`),
      libvirt: libvirtWorld(ns, libvirtd, `${prefix}-${suffix}`),
      'cloud-hypervisor': chWorld(ns, chHost, `${prefix}-${suffix}`),
    };
    for (const world of Object.values(worlds)) {
      for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) if (obj) await t.apply(obj);
      // Cluster-scoped: the namespace does not take them along.
      teardown.add(() => Promise.all([t.delete(world.vmClass), t.delete(world.vmImage)]));
    }

    const kubeconfig = inject('kubeconfig');
    const controller = await startRole(['controller', '--kubeconfig', kubeconfig, '--no-leader-elect', '--namespace', ns]);
    teardown.add(() => controller.stop());
    const args: Record<EnvBackend, string[]> = {
      vsphere: providerArgs(ns, extra),
      proxmox: proxmoxProviderArgs(ns, extra),
      libvirt: libvirtProviderArgs(ns, extra),
      'cloud-hypervisor': chProviderArgs(ns, kubeconfig, extra),
    };
    const providers = {} as Record<EnvBackend, RoleProcess>;
    for (const backend of ENV_BACKENDS) {
      const role = await startRole(args[backend], backend === 'cloud-hypervisor' ? { env: hostConfigEnv(chHost) } : {});
      teardown.add(() => role.stop());
      providers[backend] = role;
    }
    const runs = {} as Record<EnvBackend, BackendRun>;
    for (const backend of ENV_BACKENDS) {
      runs[backend] = {
        world: worlds[backend],
        provider: providers[backend],
        failureDomain: await publishedFailureDomain(worlds[backend].provider, providers[backend]),
      };
    }
    return { ns, controller, runs, vcsim, vsphereClient, proxmoxSim, libvirtd, libvirtAnchor, chHost, stop: () => teardown.run() };
  } catch (error) {
    await teardown.run();
    throw error;
  }
}

/** The roles of the env, by name: the controller and each backend's provider. */
export function rolesOf(env: EveryBackendEnv): Record<string, RoleProcess> {
  return { controller: env.controller, ...Object.fromEntries(ENV_BACKENDS.map((b) => [`provider ${b}`, env.runs[b].provider])) };
}
