// One backend's run of `make test-faults`: a real kube-apiserver + etcd, the
// backend's peer with slowed clone tasks, and two replicas of `banlieue
// controller` and of `banlieue provider <backend>` electing leaders. 30
// VirtualMachines are created; while their clones run, the seeded plan kills
// replicas (kill -9), deletes 10 of them, stops the API server and freezes the
// peer. Then it waits for the fleet to settle and checks what a user would:
// every kept VM Ready, every deleted one gone, the backend holding exactly the
// kept VMs, no finalizer stuck, no VM re-created unasked (checked all along the
// run, recreation-check.ts), and from the audit log, no write by a replica
// that did not lead. What differs per backend is its FaultWorld.
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType, Reason } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import type { Teardown } from '../bench/teardown.js';
import { buildKubeTools, ControlPlane } from '../support/control-plane.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import type { SeededRandom } from '../support/seeded-random.js';
import { waitFor } from '../support/wait.js';
import { decideFaultPlan, describeStep, type FaultStep, type Role } from './fault-plan.js';
import type { FaultWorld, StartFaultWorld } from './fault-world.js';
import { checkFleet, type FleetObject, type FleetReport } from './fleet-check.js';
import { checkLeaseWriters, readAudit, type LeaseHistory } from './lease-writers.js';
import { checkRecreation, NO_RECREATION, toRecreationReport, type FleetObservation, type RecreationReport } from './recreation-check.js';
import { RoleReplicas, START_TIMEOUT_MS } from './replicas.js';
import { Rounds } from './rounds.js';
import { isFailureReason } from './verdict.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
const PREFIX = 'fault-vm-';
const VMS = 30;
const DELETIONS = 10;
const KILLS = 12;
const OUTAGE_MS = 20_000;
/** A backend outage lasts until the Provider reports it, but no longer than this. */
const OUTAGE_LIMIT_MS = 120_000;
/** Short, so a killed leader's role moves within the run; renewals every 5 s (the elector's default). */
const LEASE_SECONDS = 10;
const CONTROLLER_LEASE = 'banlieue-controller';
/** After the last fault: time to settle. Generous: the machine is shared. */
const SETTLE_MS = 240_000;
const POLL_MS = 500;
/** Between two checks for re-created VMs while the plan runs (settling checks at each of its rounds). */
const CHECK_MS = 1_000;

export interface FaultCounts {
  readonly kills: Readonly<Record<`${Role} ${'leader' | 'standby'}`, number>>;
  readonly otherExits: number;
  readonly apiserverOutages: number;
  readonly backendOutages: number;
  /** The outage was seen as the world says it shows (Provider ProviderReachable=False, or machines ConnectFailed). */
  readonly unreachableSeen: boolean;
  /** Machines or VirtualMachines reporting a failure (a reason ending in Failed) at the end of the backend outage. */
  readonly failedDuringOutage: readonly string[];
  /** Provider ProviderReachable=True (and no machine ConnectFailed) again after the backend outage. */
  readonly recovered: boolean;
}

export interface FaultRun {
  /** `vsphere on vcsim`. */
  readonly title: string;
  /** The backend's peer, `vcsim`. */
  readonly peer: string;
  /** What a user reads while the peer is frozen (outageSign). */
  readonly outageSign: string;
  readonly seed: number;
  readonly plan: readonly FaultStep[];
  readonly counts: FaultCounts;
  readonly fleet: FleetReport;
  /** VirtualMachines whose VM was re-created while nobody asked, over the whole run. */
  readonly recreation: RecreationReport;
  readonly leases: Readonly<Record<Role, LeaseHistory>>;
  /** What the peer saw go wrong (e.g. calls off its API schema). */
  readonly peerProblems: readonly string[];
  readonly durationMs: number;
  /** Replica log tails, for a failed run. */
  readonly logs: string;
  /** Where every replica's whole output was written, to read a problem up. */
  readonly logsPath: string;
}

interface Env {
  readonly ns: string;
  readonly cp: ControlPlane;
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly world: FaultWorld;
  readonly replicas: Readonly<Record<Role, RoleReplicas>>;
}

/** `backend` names the namespace (`faults-<backend>`); `startWorld` brings its peer and objects. */
export async function runFaults(
  teardown: Teardown,
  say: (m: string) => void,
  random: SeededRandom,
  backend: string,
  startWorld: StartFaultWorld,
): Promise<FaultRun> {
  const began = performance.now();
  const names = Array.from({ length: VMS }, (_, i) => `${PREFIX}${String(i).padStart(2, '0')}`);
  const plan = decideFaultPlan(random, { names, deletions: DELETIONS, kills: KILLS, outageMs: OUTAGE_MS, gapMs: [1_000, 4_000], leaderShare: 0.7 });
  const env = await setUp(teardown, say, `faults-${backend}`, names, startWorld);
  const guest = new Rounds(guestRound(env), POLL_MS);
  const playing = guest.run();
  let recreation = NO_RECREATION;
  const check = (observation: FleetObservation): void => {
    const before = toRecreationReport(recreation).details.length;
    recreation = checkRecreation(recreation, observation, new Date().toISOString());
    for (const line of toRecreationReport(recreation).details.slice(before)) say(`  ${line}`);
  };
  const watch = new Rounds(async () => check(await observeFleet(env)), CHECK_MS);
  const watching = watch.run();
  const counts = {
    kills: { 'controller leader': 0, 'controller standby': 0, 'provider leader': 0, 'provider standby': 0 },
    apiserverOutages: 0,
    backendOutages: 0,
    unreachableSeen: false,
    failedDuringOutage: [] as string[],
    recovered: false,
  };
  const deleted: string[] = [];
  const auditFrom = 0;
  try {
    say(`Creating ${VMS} VirtualMachines (each clone ${env.world.cloneMs / 1000} s in ${env.world.peer})`);
    await Promise.all(names.map((name) => env.user.apply(virtualMachine(env, name))));
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
          await Promise.all(step.names.map(async (name) => env.api.request('DELETE', await env.api.pathOf(vmRef(env.ns, name)))));
          deleted.push(...step.names);
          break;
        case 'apiserver-outage':
          await env.cp.restartApiserver(step.downMs);
          counts.apiserverOutages += 1;
          say('  kube-apiserver serves again');
          break;
        case 'backend-outage':
          Object.assign(counts, await backendOutage(env, [guest, watch], step.downMs, say));
          counts.backendOutages += 1;
          break;
      }
    }
    say(`Plan done; waiting up to ${SETTLE_MS / 1000} s for the fleet to settle`);
    const kept = names.filter((n) => !deleted.includes(n));
    // Settling checks from here on, one at a time.
    watch.stop();
    await watching;
    const fleet = await settle(env, kept, deleted, check);
    const audit = readAudit(env.cp.auditLogPath, auditFrom);
    const leases = {
      controller: checkLeaseWriters(audit, { namespace: env.ns, lease: CONTROLLER_LEASE, users: env.replicas.controller.users }),
      provider: checkLeaseWriters(audit, { namespace: env.ns, lease: env.world.providerLease, users: env.replicas.provider.users }),
    };
    const otherExits = [...env.replicas.controller.exits, ...env.replicas.provider.exits].filter((e) => !e.killed).length;
    const logs = `${env.replicas.controller.logTails()}\n${env.replicas.provider.logTails()}`;
    const logsPath = keepLogs(env, backend, random.seed);
    return {
      title: env.world.title,
      peer: env.world.peer,
      outageSign: outageSign(env.world),
      seed: random.seed,
      plan,
      counts: { ...counts, otherExits },
      fleet,
      recreation: toRecreationReport(recreation),
      leases,
      peerProblems: env.world.peerProblems?.() ?? [],
      durationMs: performance.now() - began,
      logs,
      logsPath,
    };
  } catch (err) {
    say(`${env.replicas.controller.logTails()}\n${env.replicas.provider.logTails()}\nevery replica's whole output: ${keepLogs(env, backend, random.seed)}`);
    throw err;
  } finally {
    guest.stop();
    watch.stop();
    await Promise.all([playing, watching]);
  }
}

/** Writes every replica's whole output to a new file under the temp directory; its path. */
function keepLogs(env: Pick<Env, 'replicas'>, backend: string, seed: number): string {
  const path = join(mkdtempSync(join(tmpdir(), 'banlieue-faults-')), `${backend}-seed-${seed}.log`);
  writeFileSync(path, `${env.replicas.controller.logs()}\n${env.replicas.provider.logs()}\n`);
  return path;
}

/** Control plane (one API user per replica), the backend's peer and the user's objects, both roles twice. */
async function setUp(teardown: Teardown, say: (m: string) => void, ns: string, names: readonly string[], startWorld: StartFaultWorld): Promise<Env> {
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
  await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  const world = await startWorld(teardown, { namespace: ns, prefix: PREFIX, names, say });
  for (const obj of world.objects) await user.apply(obj);

  const election = (userName: string, identity: string): string[] => [
    '--kubeconfig',
    cp.kubeconfigOf(userName),
    '--namespace',
    ns,
    '--leader-election-namespace',
    ns,
    '--leader-election-identity',
    identity,
    '--lease-duration',
    String(LEASE_SECONDS),
  ];
  const replicas = {
    controller: new RoleReplicas('controller', users.controller, (u, id) => ['controller', ...election(u, id)]),
    provider: new RoleReplicas('provider', users.provider, (u, id) => [...world.providerArgs, ...election(u, id)], world.providerEnv),
  };
  say(`Starting two replicas of banlieue controller and of banlieue ${world.providerArgs.slice(0, 2).join(' ')}`);
  teardown.defer('controller replicas', () => replicas.controller.stop());
  teardown.defer('provider replicas', () => replicas.provider.stop());
  await Promise.all([replicas.controller.start(), replicas.provider.start()]);
  await waitFor(`Provider on ${world.peer} Ready`, async () => conditionIs(await api.get<Obj>(world.provider), ConditionType.Ready, 'True'), 180_000);
  return { ns, cp, api, user, world, replicas };
}

/** What a user reads while the world's peer is frozen: on the Provider, or on the machines (FaultWorld.outageShownOn). */
export function outageSign(world: Pick<FaultWorld, 'outageShownOn'>): string {
  return world.outageShownOn === 'machines' ? 'machines Ready=False ConnectFailed' : 'Provider ProviderReachable=False';
}

/** The peer frozen for `downMs`: the Provider (or its machines) must say so, no machine may fail, and all must recover. */
async function backendOutage(env: Env, rounds: readonly Rounds[], downMs: number, say: (m: string) => void): Promise<Partial<FaultCounts>> {
  // The outage is judged from the Provider's condition, which only a leader writes: freeze once one leads
  // (a kill just before may leave both replicas starting or waiting for the Lease).
  // Both replicas may have just been killed: a replacement starts, then takes the Lease.
  await waitFor('a provider replica leading', async () => (await env.replicas.provider.replicaThatIs('leader')) !== undefined, START_TIMEOUT_MS + 120_000);
  // The run's own backend client would hang on a frozen peer too.
  await Promise.all(rounds.map((r) => r.pause()));
  env.world.freeze();
  const frozenAt = Date.now();
  let unreachableSeen = false;
  try {
    // At least `downMs`, and on until the Provider says so (bounded): on a busy machine a replica that
    // just took the Lease may still be logging in when the freeze begins, and its discovery deadline
    // runs from then.
    while (Date.now() < frozenAt + downMs || (!unreachableSeen && Date.now() < frozenAt + OUTAGE_LIMIT_MS)) {
      if (!unreachableSeen && (await isOutageShown(env))) {
        unreachableSeen = true;
        say(`  ${outageSign(env.world)}`);
      }
      await delay(POLL_MS);
    }
  } finally {
    env.world.resume();
    for (const r of rounds) r.resume();
  }
  const failedDuringOutage = [...(await list(env, CORE, 'VirtualMachine')), ...(await list(env, INFRA, env.world.machineKind))]
    .filter((o) => conditionsOf(o).some((c) => c.status === 'False' && isFailureReason(c.reason, o.metadata.deletionTimestamp !== undefined)))
    .map(
      (o) =>
        `${o.kind ?? ''} ${o.metadata.name}: ${conditionsOf(o)
          .filter((c) => isFailureReason(c.reason, o.metadata.deletionTimestamp !== undefined))
          .map((c) => `${c.type} ${c.reason}`)
          .join(', ')}`,
    );
  say(
    `  ${env.world.peer} resumed after ${((Date.now() - frozenAt) / 1000).toFixed(0)} s${unreachableSeen ? '' : `; ${outageSign(env.world)} was NOT seen during the outage`}`,
  );
  let recovered = false;
  try {
    await waitFor('Provider ProviderReachable=True (and no machine ConnectFailed) after the outage', () => isRecovered(env), 120_000);
    recovered = true;
  } catch (err) {
    say(`  ${String(err)}`);
  }
  return { unreachableSeen, failedDuringOutage, recovered };
}

/** The outage as the world says a user sees it: the Provider unreachable, or a machine whose VM does not answer. */
async function isOutageShown(env: Env): Promise<boolean> {
  if (env.world.outageShownOn !== 'machines') return conditionIs(await env.api.get<Obj>(env.world.provider), ConditionType.ProviderReachable, 'False');
  return (await list(env, INFRA, env.world.machineKind)).some(isUnreachableMachine);
}

/** The Provider reachable, and for a world whose outage shows on machines, none of them still unreachable. */
async function isRecovered(env: Env): Promise<boolean> {
  if (!conditionIs(await env.api.get<Obj>(env.world.provider), ConditionType.ProviderReachable, 'True')) return false;
  return env.world.outageShownOn !== 'machines' || !(await list(env, INFRA, env.world.machineKind)).some(isUnreachableMachine);
}

const isUnreachableMachine = (machine: Obj): boolean =>
  conditionsOf(machine).some((c) => c.type === ConditionType.Ready && c.status === 'False' && c.reason === Reason.ConnectFailed);

/** Wait until every kept VM is Ready and every deleted one gone (or the deadline), then check the fleet; each round is a check for re-created VMs too. */
async function settle(env: Env, kept: readonly string[], deleted: readonly string[], check: (observation: FleetObservation) => void): Promise<FleetReport> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const observation = await observeFleet(env);
    check(observation);
    const report = checkFleet({ kept, deleted }, observation.vms, observation.machines, observation.backend);
    const settled =
      report.notReady.length === 0 && report.notGone.length === 0 && report.stuckFinalizers === 0 && report.duplicates === 0 && report.orphans === 0;
    if (settled || Date.now() > deadline) return report;
    await delay(2_000);
  }
}

/** The backend, then the machines, then the VirtualMachines: in that order (FleetObservation says why). */
async function observeFleet(env: Env): Promise<FleetObservation> {
  const toFleet = (o: Obj): FleetObject => {
    const providerID = o.spec?.providerID;
    return {
      name: o.metadata.name,
      uid: o.metadata.uid ?? '',
      deleting: o.metadata.deletionTimestamp !== undefined,
      finalizers: o.metadata.finalizers ?? [],
      ready: conditionIs(o, ConditionType.Ready, 'True'),
      ...(typeof providerID === 'string' ? { providerID, uuid: env.world.uuidOf(providerID) } : {}),
    };
  };
  const backend = await env.world.backendVms();
  const machines = (await list(env, INFRA, env.world.machineKind)).map(toFleet);
  const vms = (await list(env, CORE, 'VirtualMachine')).map(toFleet);
  return { backend, machines, vms };
}

/** A round of the guest's side, where the world plays it: handed the run's machines. */
function guestRound(env: Env): (() => Promise<void>) | undefined {
  const play = env.world.playGuest?.bind(env.world);
  return play && (async () => play(await list(env, INFRA, env.world.machineKind)));
}

function virtualMachine(env: Env, name: string): Obj {
  const { vmClassName, vmImageName, placement } = env.world;
  return { ...vmRef(env.ns, name), spec: { classRef: { name: vmClassName }, imageRef: { name: vmImageName }, ...(placement ? { placement } : {}) } };
}

const vmRef = (ns: string, name: string): Obj => ({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: ns } });

async function list(env: Pick<Env, 'api' | 'ns'>, apiVersion: string, kind: string): Promise<Obj[]> {
  const items = (await env.api.request<{ items: Obj[] }>('GET', await env.api.pathOf({ apiVersion, kind, metadata: { namespace: env.ns } }))).items;
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
