// Issue 15, Build 3: hostile input applied for real. A seeded sample of the
// generated corpus (test/support/hostile-corpus.ts), at least 500 objects over
// every kind, is created through the real kube-apiserver (as kubectl apply:
// fieldValidation=Strict) into a namespace where `banlieue controller` and
// `banlieue provider vsphere` run against vcsim. The bases are pointed at that
// world (its Provider, class, image, template and failure domain) so that the
// accepted variants reach the scheduler and vCenter instead of stopping at a
// missing reference. Then, as a user sees it: every refusal names a field,
// every accepted object the roles reconcile reports a condition with a typed
// reason, neither role exits, and an idle minute afterwards costs at most the
// idle budget of vsphere-idle-budget.test.ts per object, with the roles' CPU
// back near idle.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Reason } from '../../infra/api/conditions.js';
import { ALL_KINDS, INFRA_CLUSTER_KINDS, kindByName } from '../../infra/api/kinds.js';
import { ApiStatusError } from '../../controller/runtime/kube-api.js';
import { lookupKind } from '../../controller/cli/validate/kind-lookup.js';
import { toFieldErrors } from '../../controller/cli/validate/server-checker.js';
import type { FieldError } from '../../controller/cli/validate/verdict.js';
import { auditOffset, countWrites, untilWritesSettle } from '../support/audit-writes.js';
import { backendCalls, callsSince, totalCalls } from '../support/backend-calls.js';
import { TestApi, type Obj } from '../support/fixtures.js';
import { baseKindOf, corpusOf, sampleOfEachKind, validBases, type CorpusCase, type CorpusObject } from '../support/hostile-corpus.js';
import { readProcess } from '../support/process-table.js';
import { SeededRandom, seedFromEnv } from '../support/seeded-random.js';
import { startVsphereEnv, stopVsphereEnv, vsphereMachines, type VsphereEnv } from '../support/vsphere-env.js';
import { playTools, uuidOf } from '../support/vsphere-world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const SEED = seedFromEnv('HOSTILE_SEED', 15);
const IDLE_MS = 60_000;
/** Linux reports CPU time in USER_HZ ticks, 100 a second on every architecture it runs on. */
const TICKS_PER_SECOND = 100;
/** A bound, not a timing: the machine is shared, so "idle" is generous. */
const IDLE_CPU_SHARE = 0.2;

/** How many cases of each kind: the kinds the running roles reconcile weigh most; every kind has some. */
const SAMPLE: Readonly<Record<string, number>> = {
  VirtualMachine: 60,
  VSphereMachine: 110,
  Provider: 60,
  VMImage: 50,
  VSphereCluster: 25,
  VMClass: 20,
  VSphereMachineTemplate: 20,
};
const OTHER_KINDS_SAMPLE = 15;

/** Kinds whose accepted objects a role here reports on with conditions (templates and classes have none). */
const REPORTED_KINDS = new Set(['VirtualMachine', 'VSphereMachine', 'Provider', 'VMImage', ...INFRA_CLUSTER_KINDS.map((k) => k.kind)]);
const TYPED_REASONS: ReadonlySet<string> = new Set(Object.values(Reason));

interface Applied {
  readonly description: string;
  readonly object: CorpusObject;
  /** Empty when the API server stored the object. */
  readonly errors: readonly FieldError[];
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The world's own objects as the bases, so variants get as far as vCenter. */
function basesFor(env: VsphereEnv, failureDomain: string): Map<string, CorpusObject> {
  const bases = validBases();
  const world = env.world;
  const set = (kind: string, spec: Record<string, unknown>): void => {
    const base = bases.get(kind);
    if (base) bases.set(kind, { ...base, spec: structuredClone(spec) as CorpusObject['spec'] });
  };
  set('VirtualMachine', { classRef: { name: world.vmClass.metadata.name }, imageRef: { name: world.vmImage.metadata.name } });
  set('Provider', world.provider.spec ?? {});
  set('VMClass', world.vmClass.spec ?? {});
  set('VMImage', world.vmImage.spec ?? {});
  // What a user writes for vcsim: every string in it is handed to vCenter.
  set('VSphereMachine', {
    providerRef: { name: world.provider.metadata.name },
    failureDomain,
    template: world.vmImage.spec?.sources[0].ref,
    datastore: 'LocalDS_0',
    numCpus: 1,
    memoryMiB: 512,
    firmware: 'efi',
    disks: [{ name: 'os', sizeGiB: 10, provisioning: 'thin' }],
    network: [{ name: 'eth0', portGroup: 'VM Network' }],
    desiredPowerState: 'PoweredOn',
  });
  const cluster = bases.get('VSphereCluster');
  if (cluster) set('VSphereCluster', { ...cluster.spec as Record<string, unknown>, providerRefs: [{ name: world.provider.metadata.name }] });
  return bases;
}

/** Unique names (kind and position) so that every case is its own object; a case about the name keeps its name. */
function placed(cases: readonly CorpusCase[], bases: ReadonlyMap<string, CorpusObject>, ns: string): CorpusCase[] {
  return cases.map((c, i) => {
    const object = structuredClone(c.object);
    const kind = baseKindOf(c);
    const namespaced = (() => {
      try {
        return kindByName(kind).scope === 'Namespaced';
      } catch {
        return true;
      }
    })();
    if (object.metadata.name === bases.get(kind)?.metadata.name) object.metadata.name = namespaced ? `${kind.toLowerCase()}-${i}` : `${ns}-${kind.toLowerCase()}-${i}`;
    if (namespaced) object.metadata.namespace = ns;
    return { description: c.description, object };
  });
}

/** Create as kubectl apply would; a kind or version nobody serves is refused before the API server, as kubectl does. */
async function createForReal(c: CorpusCase): Promise<Applied> {
  const o = c.object;
  const lookup = lookupKind(o.apiVersion, o.kind, ALL_KINDS);
  if ('error' in lookup) return { ...c, errors: [lookup.error] };
  const collection = await t.api.pathOf({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: '', namespace: typeof o.metadata.namespace === 'string' ? o.metadata.namespace : undefined } });
  try {
    await t.api.request('POST', collection, { query: { fieldValidation: 'Strict' }, body: o });
    return { ...c, errors: [] };
  } catch (err) {
    if (err instanceof ApiStatusError && err.code >= 400 && err.code < 500) return { ...c, errors: toFieldErrors(err) };
    throw err;
  }
}

async function inBatches<T, R>(items: readonly T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return out;
}

/** Every object of the kinds the roles report on, as the API has them now: the corpus' and the VSphereMachines the VMs made. */
async function reportedObjects(ns: string, accepted: readonly Applied[]): Promise<Obj[]> {
  const kinds = [...new Set(accepted.map((a) => a.object.kind).filter((k) => REPORTED_KINDS.has(k)))];
  const lists = await Promise.all(
    kinds.map(async (kind) => {
      const def = kindByName(kind);
      const path = await t.api.pathOf({ apiVersion: `${def.group}/${def.version}`, kind, metadata: { name: '', namespace: def.scope === 'Namespaced' ? ns : undefined } });
      return (await t.api.request<{ items: Obj[] }>('GET', path)).items;
    }),
  );
  const ours = new Set(accepted.map((a) => `${a.object.kind}/${a.object.metadata.name}`));
  // Cluster-scoped images of other suites are not ours; every namespaced object here is.
  return lists.flat().filter((o) => o.metadata.namespace === ns || ours.has(`${o.kind}/${o.metadata.name}`));
}

/** Why an object does not yet report itself: no conditions, no Ready, or a reason that is not one of infra/api/conditions.ts. */
function unreported(o: Obj): string | undefined {
  const conditions = (o.status?.conditions ?? []) as Condition[];
  const what = `${o.kind} ${o.metadata.name.slice(0, 70)}`;
  if (conditions.length === 0) return `${what}: no status conditions`;
  if (!conditions.some((c) => c.type === 'Ready')) return `${what}: no Ready condition (${conditions.map((c) => c.type).join(', ')})`;
  const untyped = conditions.filter((c) => !TYPED_REASONS.has(c.reason ?? ''));
  return untyped.length > 0 ? `${what}: untyped reason ${untyped.map((c) => `${c.type}=${c.reason ?? ''}`).join(', ')}` : undefined;
}

const cpuTicks = (pid: number | undefined): number => (pid === undefined ? 0 : (readProcess(pid)?.cpuTicks ?? 0));

describe('hostile input through the API server with both roles running (issue 15)', () => {
  let env: VsphereEnv;
  let applied: Applied[] = [];
  const accepted = (): Applied[] => applied.filter((a) => a.errors.length === 0);
  const audit = inject('auditLogPath');

  beforeAll(async () => {
    // The default poll and rediscover periods (the suite's own are shorter), spelt out: a machine vCenter
    // refuses is tried again after 6 poll periods, then ever later. At the 2 s poll the idle-budget test
    // stresses (2 refused machines), the first retries of this corpus' many refused machines (12 s, 24 s,
    // 48 s...) would still fall in a minute measured soon after they were created; at 10 s (60 s, 120 s...)
    // the minute shows the steady state within this suite's time.
    env = await startVsphereEnv('hostile', { providerFlags: ['--poll-period', '10', '--rediscover-period', '300'] });
    const provider = await t.get(env.world.provider);
    const failureDomain = (provider?.status?.failureDomains as { name: string }[] | undefined)?.[0]?.name;
    if (!failureDomain) throw new Error('vcsim Provider published no failure domain');
    const bases = basesFor(env, failureDomain);
    const sample = sampleOfEachKind(corpusOf(bases), (kind) => SAMPLE[kind] ?? OTHER_KINDS_SAMPLE, new SeededRandom(SEED));
    applied = await inBatches(placed(sample, bases, env.ns), 8, createForReal);
    console.log(`hostile corpus, seed ${SEED} (HOSTILE_SEED): ${applied.length} objects, ${accepted().length} accepted`);
  }, 240_000);

  afterAll(async () => {
    if (!env) return;
    // Namespaced objects go with the namespace; cluster-scoped ones are deleted one by one.
    const clusterScoped = accepted().filter((a) => a.object.metadata.namespace === undefined);
    await Promise.all(clusterScoped.map((a) => t.delete(a.object as Obj)));
    // Machines while the provider runs to take their finalizers off; a stuck one shows in the log, the namespace goes anyway.
    const machines = accepted().filter((a) => a.object.kind === 'VSphereMachine');
    await Promise.all(machines.map((a) => t.delete(a.object as Obj)));
    await Promise.all(machines.map((a) => t.gone(a.object as Obj, 120_000).catch((err: unknown) => console.log(String(err)))));
    await stopVsphereEnv(env);
  }, 300_000);

  it('applies at least 500 objects over every kind, a good share of them accepted', () => {
    expect(applied.length).toBeGreaterThanOrEqual(500);
    expect(ALL_KINDS.filter((k) => !applied.some((a) => a.object.kind === k.kind)).map((k) => k.kind)).toEqual([]);
    expect(accepted().length).toBeGreaterThanOrEqual(100);
  });

  it('names the field in every refusal', () => {
    const unnamed = applied.filter((a) => a.errors.length > 0 && !a.errors.some((e) => e.field !== '')).map((a) => `${a.description}: ${a.errors.map((e) => e.message.slice(0, 200)).join('; ')}`);
    expect(unnamed).toEqual([]);
  });

  it('reports every accepted object the roles reconcile by a condition with a typed reason', async () => {
    let missing: string[] = [];
    await waitFor(
      'every accepted object to report a typed Ready condition',
      async () => {
        missing = (await reportedObjects(env.ns, accepted())).flatMap((o) => unreported(o) ?? []);
        return missing.length === 0;
      },
      120_000,
    ).catch(() => undefined);
    expect(missing).toEqual([]);
  }, 180_000);

  it('stays within the idle budget per object for a minute afterwards, CPU back near idle', async () => {
    // VMware Tools' part for every VM vCenter made, as in the idle-budget test: a machine waiting for its
    // guest IP is looked at every poll period by design (--poll-period), which is no idle.
    const machines0 = await vsphereMachines(env.ns);
    await Promise.all(machines0.map((m, i) => (typeof m.spec?.providerID === 'string' ? playTools(env.client, uuidOf(m.spec.providerID as string), `10.70.${Math.floor(i / 200)}.${(i % 200) + 10}`) : false)));
    // Settled: the status writes that trail the last condition are done.
    expect(await untilWritesSettle(audit, auditOffset(audit), 10_000, 120_000)).toBe(true);
    const objects = await reportedObjects(env.ns, accepted());
    const machines = objects.filter((o) => o.kind === 'VSphereMachine').length;
    const providers = objects.filter((o) => o.kind === 'Provider').length;

    const from = auditOffset(audit);
    const callsBefore = await backendCalls(env.provider);
    const cpuBefore = { controller: cpuTicks(env.controller.child.pid), provider: cpuTicks(env.provider.child.pid) };
    // The measurement is a fixed window: an idle minute, by definition.
    await delay(IDLE_MS);
    const byMethod = callsSince(callsBefore, await backendCalls(env.provider));
    const calls = totalCalls(byMethod);
    const cpu = {
      controller: (cpuTicks(env.controller.child.pid) - cpuBefore.controller) / TICKS_PER_SECOND / (IDLE_MS / 1000),
      provider: (cpuTicks(env.provider.child.pid) - cpuBefore.provider) / TICKS_PER_SECOND / (IDLE_MS / 1000),
    };
    const writes = countWrites(audit, from);
    const writesTotal = Object.values(writes).reduce((sum, w) => sum + w.total, 0);
    console.log(
      `idle minute after the hostile corpus: ${objects.length} reported objects (${machines} VSphereMachines, ${providers} Providers), ${calls} vCenter calls ${JSON.stringify(byMethod)}, ${writesTotal} API writes ${JSON.stringify(Object.fromEntries(Object.entries(writes).map(([role, w]) => [role, w.byResource])))}, CPU ${JSON.stringify(cpu)}`,
    );

    // At most 1 API write per object, as in the idle-budget test. vCenter calls: the idle-budget test holds
    // 2 per machine for healthy machines; here half the machines are refused and every image is looked up on
    // every Provider, and a minute still costs about 2.5 calls per reported object (seen: 252 for 98), so the
    // bound is 4 per object, well under the retry storms this suite found (900 a minute: a refused clone
    // restarted every 10 s, work-queue.ts).
    expect(writesTotal).toBeLessThanOrEqual(objects.length);
    expect(calls, JSON.stringify(byMethod)).toBeLessThanOrEqual(4 * objects.length);
    expect(cpu.controller).toBeLessThan(IDLE_CPU_SHARE);
    expect(cpu.provider).toBeLessThan(IDLE_CPU_SHARE);
  }, 300_000);

  it('keeps both roles running through it all', () => {
    expect({ controller: env.controller.child.exitCode, provider: env.provider.child.exitCode }).toEqual({ controller: null, provider: null });
  });
});
