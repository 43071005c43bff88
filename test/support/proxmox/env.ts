// The Proxmox integration setting, shared by the suites that run
// VirtualMachines on the schema-held PVE simulator: a namespace, the simulator
// (three nodes, a template, tasks that take a while), the user's
// Provider/Secret/VMClass/VMImage, and `banlieue controller` and `banlieue
// provider proxmox` as processes against the test API server. The simulator
// runs in the test process; the provider reaches it over loopback HTTPS.
import { inject } from 'vitest';
import { startProxmoxSim, type ProxmoxSim, type ProxmoxSimOptions } from '../../sims/proxmox/proxmox-sim.js';
import type { SimVm } from '../../sims/proxmox/sim-state.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../controller-process.js';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../fixtures.js';
import { proxmoxWorld, type ProxmoxWorld } from './world.js';
import { createNamespace } from '../kube.js';
import { waitFor } from '../wait.js';

const t = new TestApi();

export interface ProxmoxEnv {
  readonly ns: string;
  readonly removeNs: () => Promise<void>;
  readonly sim: ProxmoxSim;
  readonly world: ProxmoxWorld;
  readonly controller: RoleProcess;
  /** Replaced when a test restarts the provider (startProxmoxProvider). */
  provider: RoleProcess;
  readonly providerFlags: readonly string[];
}

export interface ProxmoxEnvOptions {
  /** Simulator options (task delays…). @default tasks of 200 ms, clones of 1 s */
  readonly sim?: ProxmoxSimOptions;
  readonly providerFlags?: readonly string[];
}

/** `banlieue provider proxmox` for one namespace, polling each second. */
export function proxmoxProviderArgs(ns: string, extra: readonly string[] = []): string[] {
  return providerRoleArgs('proxmox', inject('kubeconfig'), ns, 3, extra);
}

export function startProxmoxProvider(env: ProxmoxEnv): Promise<RoleProcess> {
  return startRole(proxmoxProviderArgs(env.ns, env.providerFlags));
}

export async function startProxmoxEnv(prefix: string, options: ProxmoxEnvOptions = {}): Promise<ProxmoxEnv> {
  const suffix = Math.random().toString(36).slice(2, 7);
  const { name: ns, remove: removeNs } = await createNamespace(prefix);
  const sim = await startProxmoxSim({ taskDelayMs: { qmclone: 1_000, default: 200 }, ...options.sim });
  const world = proxmoxWorld(ns, sim, `${prefix}-${suffix}`);
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
  const providerFlags = options.providerFlags ?? [];
  const controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
  const provider = await startRole(proxmoxProviderArgs(ns, providerFlags));
  await t.condition(world.provider, 'Ready', 'True', 'Reconciled', 60_000);
  return { ns, removeNs, sim, world, controller, provider, providerFlags };
}

export async function stopProxmoxEnv(env: ProxmoxEnv | undefined): Promise<void> {
  if (!env) return;
  try {
    await t.deleteVirtualMachines(env.ns);
  } finally {
    await env.controller.stop();
    await env.provider.stop();
    await env.sim.stop();
    for (const obj of [env.world.vmClass, env.world.vmImage]) await t.delete(obj);
    await env.removeNs();
  }
}

/** The UUID of a ProxmoxMachine's providerID, once written. */
export async function proxmoxUuidOf(ns: string, name: string, timeoutMs = 60_000): Promise<string> {
  const m = await t.exists(machineRef('proxmox', ns, name), (o) => typeof o.spec?.providerID === 'string', timeoutMs);
  return String(m.spec?.providerID).replace(/^proxmox:\/\//, '');
}

/** The simulated VMs whose smbios1 carries `uuid` (exactly one when all is well). */
export function simVmsWithUuid(sim: ProxmoxSim, uuid: string): SimVm[] {
  return [...sim.state.vms.values()].filter((v) =>
    String(v.config.smbios1 ?? '')
      .toLowerCase()
      .includes(`uuid=${uuid}`),
  );
}

/** The simulated VMs (not templates) named `prefix…`, sorted by name. */
export function simVmsNamed(sim: ProxmoxSim, prefix: string): string[] {
  return [...sim.state.vms.values()]
    .filter((v) => v.config.template !== 1 && String(v.config.name ?? '').startsWith(prefix))
    .map((v) => String(v.config.name))
    .sort();
}

/** Makes the guest agent of the machine's VM report `ip` (once the VM exists); resolves when the VirtualMachine is Ready. */
export async function readyWithAgentAddress(env: ProxmoxEnv, name: string, ip: string, timeoutMs = 120_000): Promise<Obj> {
  const uuid = await proxmoxUuidOf(env.ns, name, timeoutMs);
  await waitFor(
    `VM ${name} in the simulator`,
    () => {
      const [found] = simVmsWithUuid(env.sim, uuid);
      if (!found) return undefined;
      found.agent.addresses = [{ ip, prefix: 24 }];
      return true;
    },
    timeoutMs,
  );
  return t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', timeoutMs);
}

export async function proxmoxMachines(ns: string): Promise<Obj[]> {
  return (await t.api.request<{ items: Obj[] }>('GET', `/apis/${INFRA}/namespaces/${ns}/proxmoxmachines`)).items;
}
