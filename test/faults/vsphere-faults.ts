// The vSphere case of `make test-faults`: a real kube-apiserver + etcd, vcsim
// with slowed clone tasks, and two replicas of `banlieue controller` and of
// `banlieue provider vsphere` electing leaders. 30 VirtualMachines are
// created; while their clones run, the seeded plan kills replicas (kill -9),
// deletes 10 of them, stops the API server and freezes vcsim. Then it waits
// for the fleet to settle and checks what a user would: every kept VM Ready,
// every deleted one gone, vcsim holding exactly the kept VMs, no finalizer
// stuck, and from the audit log, no write by a replica that did not lead.
import { KubeConfig } from '@kubernetes/client-node';
import { setTimeout as delay } from 'node:timers/promises';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import type { Teardown } from '../bench/teardown.js';
import { startVcsim, type Vcsim } from '../peers/vsphere/vcsim.js';
import { buildKubeTools, ControlPlane } from '../support/control-plane.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { waitFor } from '../support/wait.js';
import { makeTemplate, playTools, uuidOf, vcsimClient, vsphereWorld, type VsphereWorld } from '../support/vsphere-world.js';
import { decideFaultPlan, describeStep, type FaultStep, type Role } from './fault-plan.js';
import { checkFleet, type BackendVm, type FleetObject, type FleetReport } from './fleet-check.js';
import { checkLeaseWriters, readAudit, type LeaseHistory } from './lease-writers.js';
import { RoleReplicas } from './replicas.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
const NS = 'faults-vsphere';
const PREFIX = 'fault-vm-';
const TEMPLATE = 'faults-ubuntu';
const VMS = 30;
const DELETIONS = 10;
const KILLS = 12;
const OUTAGE_MS = 20_000;
/** A backend outage lasts until the Provider reports it, but no longer than this. */
const OUTAGE_LIMIT_MS = 120_000;
/** Each CloneVM_Task runs this long in vcsim, so that kills land mid-clone. */
const CLONE_MS = 8_000;
/** Short, so a killed leader's role moves within the run; renewals every 5 s (the elector's default). */
const LEASE_SECONDS = 10;
const CONTROLLER_LEASE = 'banlieue-controller';
const PROVIDER_LEASE = 'banlieue-provider-vsphere';
/** After the last fault: time to settle. Generous: the machine is shared. */
const SETTLE_MS = 240_000;
const POLL_MS = 500;

export interface FaultCounts {
  readonly kills: Readonly<Record<`${Role} ${'leader' | 'standby'}`, number>>;
  readonly otherExits: number;
  readonly apiserverOutages: number;
  readonly backendOutages: number;
  /** Provider ProviderReachable=False was seen during the backend outage. */
  readonly unreachableSeen: boolean;
  /** Machines or VirtualMachines reporting a failure (a reason ending in Failed) at the end of the backend outage. */
  readonly failedDuringOutage: readonly string[];
  /** Provider ProviderReachable=True again after the backend outage. */
  readonly recovered: boolean;
}

export interface FaultRun {
  readonly seed: number;
  readonly plan: readonly FaultStep[];
  readonly counts: FaultCounts;
  readonly fleet: FleetReport;
  readonly leases: Readonly<Record<Role, LeaseHistory>>;
  readonly durationMs: number;
  /** Replica log tails, for a failed run. */
  readonly logs: string;
}

interface Env {
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly vcsim: Vcsim;
  readonly client: VsphereClient;
  readonly world: VsphereWorld;
  readonly replicas: Readonly<Record<Role, RoleReplicas>>;
}

export async function runVsphereFaults(teardown: Teardown, say: (m: string) => void, random: SeededRandom): Promise<FaultRun> {
  const began = performance.now();
  const names = Array.from({ length: VMS }, (_, i) => `${PREFIX}${String(i).padStart(2, '0')}`);
  const plan = decideFaultPlan(random, { names, deletions: DELETIONS, kills: KILLS, outageMs: OUTAGE_MS, gapMs: [1_000, 4_000], leaderShare: 0.7 });
  const env = await setUp(teardown, say);
  const tools = new ToolsPlayer(env, names);
  const player = tools.run();
  const counts = { kills: { 'controller leader': 0, 'controller standby': 0, 'provider leader': 0, 'provider standby': 0 }, apiserverOutages: 0, backendOutages: 0, unreachableSeen: false, failedDuringOutage: [] as string[], recovered: false };
  const deleted: string[] = [];
  const auditFrom = 0;
  try {
    say(`Creating ${VMS} VirtualMachines (each clone ${CLONE_MS / 1000} s in vcsim)`);
    await Promise.all(names.map((name) => env.user.apply(virtualMachine(env.world, name))));
    for (const step of plan) {
      await delay(step.afterMs);
      say(describeStep(step));
      switch (step.kind) {
        case 'kill': {
          const user = await env.replicas[step.role].kill(step.target);
          counts.kills[`${step.role} ${step.target}`] += 1;
          say(`  killed ${user}; a replacement is starting`);
          break;
        }
        case 'delete':
          await Promise.all(step.names.map(async (name) => env.api.request('DELETE', await env.api.pathOf(vmRef(name)))));
          deleted.push(...step.names);
          break;
        case 'apiserver-outage':
          await env.cp.restartApiserver(step.downMs);
          counts.apiserverOutages += 1;
          say('  kube-apiserver serves again');
          break;
        case 'backend-outage':
          Object.assign(counts, await backendOutage(env, tools, step.downMs, say));
          counts.backendOutages += 1;
          break;
      }
    }
    say(`Plan done; waiting up to ${SETTLE_MS / 1000} s for the fleet to settle`);
    const kept = names.filter((n) => !deleted.includes(n));
    const fleet = await settle(env, kept, deleted);
    const audit = readAudit(env.cp.auditLogPath, auditFrom);
    const leases = {
      controller: checkLeaseWriters(audit, { namespace: NS, lease: CONTROLLER_LEASE, users: env.replicas.controller.users }),
      provider: checkLeaseWriters(audit, { namespace: NS, lease: PROVIDER_LEASE, users: env.replicas.provider.users }),
    };
    const otherExits = [...env.replicas.controller.exits, ...env.replicas.provider.exits].filter((e) => !e.killed).length;
    const logs = `${env.replicas.controller.logTails()}\n${env.replicas.provider.logTails()}`;
    return { seed: random.seed, plan, counts: { ...counts, otherExits }, fleet, leases, durationMs: performance.now() - began, logs };
  } catch (err) {
    say(`${env.replicas.controller.logTails()}\n${env.replicas.provider.logTails()}`);
    throw err;
  } finally {
    tools.stop();
    await player;
  }
}

/** Control plane (one API user per replica), vcsim with slow clones and a template, the user's objects, both roles twice. */
async function setUp(teardown: Teardown, say: (m: string) => void): Promise<Env> {
  const users = { controller: ['fault-controller-a', 'fault-controller-b'], provider: ['fault-provider-a', 'fault-provider-b'] };
  say('Starting kube-apiserver, etcd and kube-controller-manager');
  const cp = await ControlPlane.start(await buildKubeTools(), { users: [...users.controller, ...users.provider] });
  teardown.defer('control plane', () => cp.stop());
  await applyCrdsFromDist(cp);
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  // Not `banlieue/…`, and the admin user: the run's own writes are not banlieue's.
  const api = new KubeApi(kc, { userAgent: 'banlieue-faults' });
  const user = new ServerSideApply(api, 'banlieue-faults');
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });

  say(`Starting vcsim (-method-delay CloneVm:${CLONE_MS})`);
  // LockHandoff:0 as in the delayed-clone bench: vcsim's lock hand-over would otherwise add the delay again.
  const vcsim = await startVcsim({ datacenters: 2, clusters: 2, methodDelayMs: { CloneVm: CLONE_MS, LockHandoff: 0 } });
  teardown.defer('vcsim', () => vcsim.stop());
  const client = await vcsimClient(vcsim);
  teardown.defer('vcsim session', () => client.close());
  await makeTemplate(client, TEMPLATE);
  const world = vsphereWorld(NS, vcsim, 'faults', TEMPLATE);
  for (const obj of [world.secret, world.provider, world.vmClass, world.vmImage]) await user.apply(obj);

  const election = (userName: string, identity: string): string[] => ['--kubeconfig', cp.kubeconfigOf(userName), '--namespace', NS, '--leader-election-namespace', NS, '--leader-election-identity', identity, '--lease-duration', String(LEASE_SECONDS)];
  const replicas = {
    controller: new RoleReplicas('controller', users.controller, (u, id) => ['controller', ...election(u, id)]),
    provider: new RoleReplicas('provider', users.provider, (u, id) => ['provider', 'vsphere', ...election(u, id), '--poll-period', '1', '--rediscover-period', '5', '--discover-timeout', '8']),
  };
  say('Starting two replicas of banlieue controller and of banlieue provider vsphere');
  teardown.defer('controller replicas', () => replicas.controller.stop());
  teardown.defer('provider replicas', () => replicas.provider.stop());
  await Promise.all([replicas.controller.start(), replicas.provider.start()]);
  await waitFor('Provider vcsim Ready', async () => conditionIs(await api.get<Obj>(world.provider), ConditionType.Ready, 'True'), 180_000);
  return { cp, api, user, vcsim, client, world, replicas };
}

/** vcsim frozen for `downMs`: the Provider must say so, no machine may fail, and the Provider must recover. */
async function backendOutage(env: Env, tools: ToolsPlayer, downMs: number, say: (m: string) => void): Promise<Partial<FaultCounts>> {
  // The outage is judged from the Provider's condition, which only a leader writes: freeze once one leads
  // (a kill just before may leave both replicas starting or waiting for the Lease).
  await waitFor('a provider replica leading', async () => (await env.replicas.provider.replicaThatIs('leader')) !== undefined, 120_000);
  // The run's own vCenter client would hang on a frozen vcsim too.
  await tools.pause();
  env.vcsim.pause();
  const frozenAt = Date.now();
  let unreachableSeen = false;
  try {
    // At least `downMs`, and on until the Provider says so (bounded): on a busy machine a replica that
    // just took the Lease may still be logging in when the freeze begins, and its discovery deadline
    // runs from then.
    while (Date.now() < frozenAt + downMs || (!unreachableSeen && Date.now() < frozenAt + OUTAGE_LIMIT_MS)) {
      if (!unreachableSeen && conditionIs(await env.api.get<Obj>(env.world.provider), ConditionType.ProviderReachable, 'False')) {
        unreachableSeen = true;
        say('  Provider ProviderReachable=False');
      }
      await delay(POLL_MS);
    }
  } finally {
    env.vcsim.resume();
    tools.resume();
  }
  const failedDuringOutage = [...(await list(env.api, CORE, 'VirtualMachine')), ...(await list(env.api, INFRA, 'VSphereMachine'))]
    .filter((o) => conditionsOf(o).some((c) => c.status === 'False' && c.reason?.endsWith('Failed')))
    .map((o) => `${o.kind ?? ''} ${o.metadata.name}: ${conditionsOf(o).filter((c) => c.reason?.endsWith('Failed')).map((c) => `${c.type} ${c.reason}`).join(', ')}`);
  say(`  vcsim resumed after ${((Date.now() - frozenAt) / 1000).toFixed(0)} s${unreachableSeen ? '' : '; ProviderReachable=False was NOT seen during the outage'}`);
  let recovered = false;
  try {
    await waitFor('Provider ProviderReachable=True after the outage', async () => conditionIs(await env.api.get<Obj>(env.world.provider), ConditionType.ProviderReachable, 'True'), 120_000);
    recovered = true;
  } catch (err) {
    say(`  ${String(err)}`);
  }
  return { unreachableSeen, failedDuringOutage, recovered };
}

/** Wait until every kept VM is Ready and every deleted one gone (or the deadline), then check the fleet. */
async function settle(env: Env, kept: readonly string[], deleted: readonly string[]): Promise<FleetReport> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const report = await observeFleet(env, kept, deleted);
    const settled = report.notReady.length === 0 && report.notGone.length === 0 && report.stuckFinalizers === 0 && report.duplicates === 0 && report.orphans === 0;
    if (settled || Date.now() > deadline) return report;
    await delay(2_000);
  }
}

async function observeFleet(env: Env, kept: readonly string[], deleted: readonly string[]): Promise<FleetReport> {
  const toFleet = (o: Obj): FleetObject => {
    const providerID = o.spec?.providerID;
    return {
      name: o.metadata.name,
      deleting: o.metadata.deletionTimestamp !== undefined,
      finalizers: o.metadata.finalizers ?? [],
      ready: conditionIs(o, ConditionType.Ready, 'True'),
      ...(typeof providerID === 'string' ? { uuid: uuidOf(providerID).toLowerCase() } : {}),
    };
  };
  const vms = (await list(env.api, CORE, 'VirtualMachine')).map(toFleet);
  const machines = (await list(env.api, INFRA, 'VSphereMachine')).map(toFleet);
  return checkFleet({ kept, deleted }, vms, machines, await fleetVms(env.client));
}

/**
 * Plays VMware Tools: once a machine's clone exists in vcsim, reports a guest
 * IP for it, as the integration tests and benches do. Paused while vcsim is frozen.
 */
class ToolsPlayer {
  private stopped = false;
  private paused = false;
  private idle: Promise<void> = Promise.resolve();
  private readonly played = new Set<string>();

  constructor(
    private readonly env: Env,
    private readonly names: readonly string[],
  ) {}

  async run(): Promise<void> {
    while (!this.stopped) {
      if (!this.paused) {
        this.idle = this.round().catch(() => undefined);
        await this.idle;
      }
      await delay(POLL_MS);
    }
  }

  /** Resolves once no round is under way. */
  async pause(): Promise<void> {
    this.paused = true;
    await this.idle;
  }

  resume(): void {
    this.paused = false;
  }

  stop(): void {
    this.stopped = true;
  }

  private async round(): Promise<void> {
    // The API server may be down: the round fails and the next one tries again.
    const machines = await list(this.env.api, INFRA, 'VSphereMachine');
    const waiting = machines.filter((m) => typeof m.spec?.providerID === 'string' && !this.played.has(String(m.spec.providerID)));
    if (waiting.length === 0) return;
    const cloned = new Set((await fleetVms(this.env.client)).map((vm) => vm.uuid));
    for (const m of waiting) {
      const uuid = uuidOf(String(m.spec?.providerID)).toLowerCase();
      const index = this.names.indexOf(m.metadata.name);
      if (!cloned.has(uuid) || index < 0) continue;
      if (await playTools(this.env.client, uuid, `10.40.0.${index + 1}`)) this.played.add(String(m.spec?.providerID));
    }
  }
}

/** The run's VMs in vcsim (not templates): one property-collector call for the whole inventory. */
async function fleetVms(client: VsphereClient): Promise<BackendVm[]> {
  const vms = await client.vms.list(client.session.serviceContent.rootFolder);
  return vms.filter((vm) => !vm.template && vm.name.startsWith(PREFIX)).map((vm) => ({ name: vm.name, uuid: (vm.uuid ?? '').toLowerCase() }));
}

function virtualMachine(world: VsphereWorld, name: string): Obj {
  return { ...vmRef(name), spec: { classRef: { name: world.vmClass.metadata.name }, imageRef: { name: world.vmImage.metadata.name } } };
}

const vmRef = (name: string): Obj => ({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: NS } });

async function list(api: KubeApi, apiVersion: string, kind: string): Promise<Obj[]> {
  const items = (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion, kind, metadata: { namespace: NS } }))).items;
  // A list's items carry no kind.
  return items.map((o) => ({ ...o, kind }));
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

const conditionsOf = (obj: Pick<Obj, 'status'>): Condition[] => (obj.status?.conditions ?? []) as Condition[];
const conditionIs = (obj: Pick<Obj, 'status'>, type: string, status: string): boolean => conditionsOf(obj).some((c) => c.type === type && c.status === status);
