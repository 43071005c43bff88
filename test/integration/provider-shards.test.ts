// Provider role shards (ADR 33): two `banlieue provider libvirt --provider-selector`
// processes, each leading on its own Lease, over two Providers (each a private libvirtd,
// test driver) through the real API server. Each machine is acted on by the shard whose
// selector matches its Provider only (the Events' reporting instance, each shard's own
// backend calls); relabelling a Provider hands it from one shard to the other (the claim
// annotation, ShardReleased then ShardClaimed), after which the new shard acts on its
// machines and the old one makes no backend call; no domain is added or removed.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { shardLeaseName } from '../../controller/cli/shard-lease.js';
import { parseSelector } from '../../infra/api/label-syntax.js';
import { startLibvirtd, type Libvirtd } from '../peers/libvirt/libvirtd.js';
import { backendCalls, callsSince, totalCalls } from '../support/backend-calls.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { anchorClient, libvirtWorld, makeImageVolume, TEST_POOL, type LibvirtWorld } from '../support/libvirt/world.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const SHARD = 'banlieue.io/provider-shard';
const leaseOf = (selector: string): string => shardLeaseName('banlieue-provider-libvirt', parseSelector(selector));
const LEASE_A = leaseOf('group=a');
const LEASE_B = leaseOf('group=b');

interface EventOf {
  reason: string;
  reportingInstance?: string;
  regarding?: { kind?: string; name?: string };
  /** MicroTime: orders Events within a second. */
  eventTime?: string;
}

/** One Provider on its own libvirtd: its daemon, the test's connection, and what a user writes. */
interface Host {
  readonly name: string;
  readonly daemon: Libvirtd;
  readonly anchor: LibvirtClient;
  readonly world: LibvirtWorld;
  /** The test driver's own domains, there before any machine. */
  readonly builtIn: readonly string[];
}

async function startHost(ns: string, name: string, group: string): Promise<Host> {
  const daemon = await startLibvirtd();
  const anchor = await anchorClient(daemon);
  await makeImageVolume(anchor, await anchor.pools.lookupByName(TEST_POOL));
  const world = libvirtWorld(ns, daemon, name);
  const secret = { ...world.secret, metadata: { ...world.secret.metadata, name: `${name}-creds` } };
  const spec = world.provider.spec as { connection: Record<string, unknown> };
  const provider = {
    ...world.provider,
    metadata: { name, namespace: ns, labels: { group, host: name } },
    spec: { ...spec, connection: { ...spec.connection, credentialsRef: { name: `${name}-creds` } } },
  } as Obj;
  await t.apply(secret);
  await t.apply(provider);
  return { name, daemon, anchor, world: { ...world, secret, provider }, builtIn: await allUuids(anchor) };
}

/** A shard of `banlieue provider libvirt`, leading on its own Lease in the test's namespace. */
function startShard(ns: string, selector: string): Promise<RoleProcess> {
  const args = providerRoleArgs('libvirt', inject('kubeconfig'), ns, 2, [
    '--provider-selector',
    selector,
    '--leader-election-namespace',
    ns,
    '--lease-duration',
    '15',
  ]);
  return startRole(args.filter((a) => a !== '--no-leader-elect'));
}

async function eventsIn(ns: string): Promise<EventOf[]> {
  return (await t.api.request<{ items: EventOf[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)).items;
}

const claimOf = async (p: Obj): Promise<string | undefined> => ((await t.get(p))?.metadata.annotations as Record<string, string> | undefined)?.[SHARD];

const allUuids = async (anchor: LibvirtClient): Promise<string[]> => (await anchor.domains.list()).map((d) => d.uuid).sort();

/** The UUIDs of the domains banlieue defined on a host. */
const domainUuids = async (host: Host): Promise<string[]> => (await allUuids(host.anchor)).filter((u) => !host.builtIn.includes(u));

describe('provider role shards by label selector', () => {
  let ns: string;
  let removeNs: () => Promise<void>;
  let hostA: Host;
  let hostB: Host;
  let controller: RoleProcess;
  let shardA: RoleProcess;
  let shardB: RoleProcess;

  const machine = (name: string): Pick<Obj, 'apiVersion' | 'kind' | 'metadata'> => machineRef('libvirt', ns, name);
  const vmOn = (name: string, host: Host, spec: Record<string, unknown> = {}): Obj =>
    vm(ns, name, hostA.world.vmClass.metadata.name, hostA.world.vmImage.metadata.name, {
      placement: { providerSelector: { matchLabels: { host: host.name } } },
      ...spec,
    });

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('shards'));
    hostA = await startHost(ns, 'kvm-a', 'a');
    hostB = await startHost(ns, 'kvm-b', 'b');
    for (const obj of [hostA.world.vmClass, hostA.world.vmImage]) await t.apply(obj);
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
    shardA = await startShard(ns, 'group=a');
    shardB = await startShard(ns, 'group = b');
  }, 240_000);

  afterAll(async () => {
    try {
      await t.deleteVirtualMachines(ns);
    } finally {
      for (const role of [controller, shardA, shardB]) await role?.stop();
      for (const host of [hostA, hostB]) {
        await host?.anchor.close();
        await host?.daemon.stop();
      }
      for (const obj of [hostA?.world.vmClass, hostA?.world.vmImage]) if (obj) await t.delete(obj);
      await removeNs?.();
    }
  }, 240_000);

  it('each shard claims the Providers its selector matches, leading on a Lease of its own', async () => {
    expect(LEASE_A).not.toBe(LEASE_B);
    await waitFor(
      'each Provider claimed by its shard',
      async () => (await claimOf(hostA.world.provider)) === LEASE_A && (await claimOf(hostB.world.provider)) === LEASE_B,
      60_000,
    );
    for (const host of [hostA, hostB]) await t.condition(host.world.provider, 'Ready', 'True', 'Reconciled', 60_000);
    for (const lease of [LEASE_A, LEASE_B]) {
      const held = await t.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: lease, namespace: ns } });
      expect(held?.spec?.holderIdentity, `Lease ${lease}`).toBeTruthy();
    }
  });

  it('acts on each machine from the shard of its Provider only', async () => {
    await t.apply(vmOn('a-1', hostA));
    await t.apply(vmOn('b-1', hostB));
    for (const name of ['a-1', 'b-1']) await t.condition(vm(ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    const events = await eventsIn(ns);
    const reporters = (name: string): string[] => [
      ...new Set(events.filter((e) => e.regarding?.kind === 'LibvirtMachine' && e.regarding.name === name).map((e) => e.reportingInstance ?? '')),
    ];
    expect(reporters('a-1')).toEqual([LEASE_A]);
    expect(reporters('b-1')).toEqual([LEASE_B]);
    expect(await domainUuids(hostA)).toHaveLength(1);
    expect(await domainUuids(hostB)).toHaveLength(1);
  });

  it('hands a relabelled Provider and its machines over to the shard that now matches it, destroying and duplicating nothing', async () => {
    const domainsBefore = [await domainUuids(hostA), await domainUuids(hostB)];

    await t.patch(hostA.world.provider, { metadata: { labels: { group: 'b' } } });
    await waitFor('kvm-a claimed by shard B', async () => (await claimOf(hostA.world.provider)) === LEASE_B, 60_000);
    // Events are recorded after the claim is written: read them once B's is there (or as they are at the deadline).
    const onKvmA = async (): Promise<EventOf[]> => (await eventsIn(ns)).filter((e) => e.regarding?.kind === 'Provider' && e.regarding.name === 'kvm-a');
    const said = (events: EventOf[], reason: string): string[] =>
      events
        .filter((e) => e.reason === reason)
        .map((e) => e.reportingInstance ?? '')
        .sort();
    const handover = await waitFor(
      'the handover Events',
      async () => {
        const events = await onKvmA();
        return said(events, 'ShardClaimed').includes(LEASE_B) ? events : undefined;
      },
      30_000,
    ).catch(onKvmA);
    expect(said(handover, 'ShardReleased')).toEqual([LEASE_A]);
    expect(said(handover, 'ShardClaimed')).toEqual([LEASE_A, LEASE_B].sort());
    // Shard A may finish a pass it had begun; once it let go, every Event on kvm-a's machines is B's.
    const released = handover.find((e) => e.reason === 'ShardReleased')?.eventTime ?? '';
    await t.condition(hostA.world.provider, 'Ready', 'True', 'Reconciled', 60_000);
    const aCallsAfter = await backendCalls(shardA);

    // Shard B acts on the moved machine (powers it off) and creates a new one on kvm-a.
    await t.patch(vm(ns, 'a-1', '', ''), { spec: { desiredPowerState: 'PoweredOff' } });
    await t.apply(vmOn('a-2', hostA));
    await t.exists(machine('a-1'), (m) => m.status?.observedPowerState === 'PoweredOff', 120_000);
    await t.condition(vm(ns, 'a-2', '', ''), 'Ready', 'True', 'Reconciled', 120_000);

    const after = (await eventsIn(ns)).filter(
      (e) => e.regarding?.kind === 'LibvirtMachine' && ['a-1', 'a-2'].includes(e.regarding.name ?? '') && (e.eventTime ?? '') > released,
    );
    expect(after.map((e) => `${e.regarding?.name} ${e.reason}`)).toEqual(expect.arrayContaining(['a-1 PoweredOff', 'a-2 Created']));
    expect([...new Set(after.map((e) => e.reportingInstance))]).toEqual([LEASE_B]);
    // Shard A serves no Provider now: not one backend call since the handover.
    expect(totalCalls(callsSince(aCallsAfter, await backendCalls(shardA)))).toBe(0);

    // kvm-a keeps its domain and has the new one; kvm-b's is untouched.
    const [aNow, bNow] = [await domainUuids(hostA), await domainUuids(hostB)];
    expect(aNow).toHaveLength(2);
    expect(aNow).toEqual(expect.arrayContaining(domainsBefore[0] ?? []));
    expect(bNow).toEqual(domainsBefore[1]);
  });
});
