// The vSphere integration setting, shared by the suites that run VirtualMachines
// on vcsim: a namespace, vcsim (optionally with task delays) and a template in
// it, the user's Provider/Secret/VMClass/VMImage, and `banlieue controller` and
// `banlieue provider vsphere` as processes against the test API server.
import { inject } from 'vitest';
import { ConditionType, Reason } from '../../../infra/api/conditions.js';
import type { VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { startVcsim, type Vcsim } from '../../peers/vsphere/vcsim.js';
import { controllerArgs, providerRoleArgs, startRole, type RoleProcess } from '../controller-process.js';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../fixtures.js';
import { createNamespace } from '../kube.js';
import { waitFor } from '../wait.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld, type VsphereWorld } from './world.js';

const t = new TestApi();

export interface VsphereEnv {
  readonly ns: string;
  readonly removeNs: () => Promise<void>;
  readonly vcsim: Vcsim;
  readonly client: VsphereClient;
  readonly world: VsphereWorld;
  readonly controller: RoleProcess;
  /** Replaced when a test restarts the provider (startProvider). */
  provider: RoleProcess;
  /** Flags the provider runs with beyond the defaults (kept for restarts). */
  readonly providerFlags: readonly string[];
}

export interface VsphereEnvOptions {
  /** vcsim -method-delay, e.g. `{ CloneVm: 20_000, LockHandoff: 0 }`: each clone task runs 20 s. */
  readonly methodDelayMs?: Readonly<Record<string, number>>;
  /** Extra provider flags, e.g. `['--machine-concurrency', '10']`. */
  readonly providerFlags?: readonly string[];
  /** Extra controller flags, e.g. `['--max-recreates-per-minute', '5']`. */
  readonly controllerFlags?: readonly string[];
}

/** `banlieue provider vsphere` for one namespace, polling each second. */
export function providerArgs(ns: string, extra: readonly string[] = []): string[] {
  return providerRoleArgs('vsphere', inject('kubeconfig'), ns, 5, extra);
}

/** Start the provider role with the env's flags (after a stop or a kill). */
export function startProvider(env: VsphereEnv): Promise<RoleProcess> {
  return startRole(providerArgs(env.ns, env.providerFlags));
}

export async function startVsphereEnv(prefix: string, options: VsphereEnvOptions = {}): Promise<VsphereEnv> {
  const suffix = Math.random().toString(36).slice(2, 7);
  const template = `ubuntu-${suffix}`;
  const { name: ns, remove: removeNs } = await createNamespace(prefix);
  const vcsim = await startVcsim({ datacenters: 2, clusters: 2, ...(options.methodDelayMs ? { methodDelayMs: options.methodDelayMs } : {}) });
  const client = await vcsimClient(vcsim);
  await makeTemplate(client, template);
  const world = vsphereWorld(ns, vcsim, `${prefix}-${suffix}`, template);
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await t.apply(obj);
  const providerFlags = options.providerFlags ?? [];
  const controller = await startRole(controllerArgs(inject('kubeconfig'), ns, options.controllerFlags));
  const provider = await startRole(providerArgs(ns, providerFlags));
  await t.condition(world.provider, 'Ready', 'True', 'Reconciled');
  return { ns, removeNs, vcsim, client, world, controller, provider, providerFlags };
}

export async function stopVsphereEnv(env: VsphereEnv | undefined): Promise<void> {
  if (!env) return;
  try {
    // Machines first, while the provider still runs to take their finalizers off.
    await t.deleteVirtualMachines(env.ns, 60_000);
  } finally {
    // Processes stop even when a machine did not go (e.g. a test left no provider running).
    await env.controller.stop();
    await env.provider.stop();
    await env.client.close();
    await env.vcsim.stop();
    for (const obj of [env.world.vmClass, env.world.vmImage]) await t.delete(obj);
    await env.removeNs();
  }
}

/** The VSphereMachine's UUID, once its spec carries a providerID. */
export async function providerIdOf(ns: string, name: string, timeoutMs = 60_000): Promise<string> {
  const m = await t.exists(machineRef('vsphere', ns, name), (o) => typeof o.spec?.providerID === 'string', timeoutMs);
  return uuidOf(m.spec?.providerID as string);
}

/** Plays VMware Tools once the VM exists in vcsim; resolves when the VirtualMachine is Ready. */
export async function readyWithAddress(env: VsphereEnv, name: string, ip: string, timeoutMs = 60_000): Promise<Obj> {
  const uuid = await providerIdOf(env.ns, name, timeoutMs);
  await waitFor(`VM ${name} in vcsim`, async () => ((await playTools(env.client, uuid, ip)) ? true : undefined), timeoutMs);
  return t.condition(vm(env.ns, name, '', ''), 'Ready', 'True', 'Reconciled', timeoutMs);
}

/** The VSphereMachines of a namespace, as the API has them now. */
export async function vsphereMachines(ns: string): Promise<Obj[]> {
  return (await t.api.request<{ items: Obj[] }>('GET', `/apis/${INFRA}/namespaces/${ns}/vspheremachines`)).items;
}

/** A clone in flight: its task remembered in status.taskRef, Ready False with reason Provisioning. */
export function isCloning(machine: Obj): boolean {
  const ready = (machine.status?.conditions as { type: string; status: string; reason?: string }[] | undefined)?.find((c) => c.type === ConditionType.Ready);
  return typeof machine.status?.taskRef === 'string' && ready?.status === 'False' && ready.reason === Reason.Provisioning;
}
