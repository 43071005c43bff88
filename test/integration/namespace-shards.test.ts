// Controller shards by namespace (ADR 33): two `banlieue controller --namespace-selector`
// processes, each leading on its own Lease and running as its own ServiceAccount with the
// install's controller rules (plus reading Namespaces), through the real API server. The test
// writes what users and provider roles write. Each namespace's VMs are acted on by the shard
// holding its claim only (the audit log's writers, the Events' reporting instance), even while a
// relabelled namespace matches both selectors; relabelling it hands it over (the claim Lease,
// ShardReleased then ShardClaimed), after which the new shard carries its VMs on and the old one
// writes nothing there; no VM or machine is lost or made twice.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { controllerLeaseName } from '../../controller/cli/controller-command.js';
import { namespaceClaimLeaseName } from '../../controller/reconcilers/namespace-shard/claims.js';
import { parseSelector } from '../../infra/api/label-syntax.js';
import { controllerRules, leaderElectionRules } from '../../infra/install/rbac-rules.js';
import { auditOffset, countWrites } from '../support/audit-writes.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, failureDomains, imageRows, machineRef, provider, runningStatus, vm, vmClass, vmImage, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { serviceAccountKubeconfig } from '../support/tenant.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const RBAC = 'rbac.authorization.k8s.io/v1';

interface EventOf {
  reason: string;
  reportingController?: string;
  reportingInstance?: string;
  regarding?: { kind?: string; name?: string };
  /** MicroTime: orders Events within a second. */
  eventTime?: string;
}

const namespaceRef = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

async function eventsIn(ns: string): Promise<EventOf[]> {
  return (await t.api.request<{ items: EventOf[] }>('GET', `/apis/events.k8s.io/v1/namespaces/${ns}/events`)).items;
}

/** The controller shards that reported Events on the VirtualMachines of `ns` (after `since`, an eventTime). */
async function vmReporters(ns: string, since = ''): Promise<string[]> {
  const events = (await eventsIn(ns)).filter(
    (e) => e.reportingController === 'banlieue.io/controller' && e.regarding?.kind === 'VirtualMachine' && (e.eventTime ?? '') > since,
  );
  return [...new Set(events.map((e) => e.reportingInstance ?? ''))].sort();
}

describe('controller shards by namespace selector', () => {
  const suffix = Math.random().toString(36).slice(2, 7);
  const cls = `shard-small-${suffix}`;
  const image = `shard-ubuntu-${suffix}`;
  let home: string;
  let moved: string;
  let kept: string;
  const removals: (() => Promise<void>)[] = [];
  let key: string;
  let leaseA: string;
  let leaseB: string;
  let userA: string;
  let userB: string;
  let shardA: RoleProcess;
  let shardB: RoleProcess;
  const audit = (): string => inject('auditLogPath');

  /** Writes of the two shards in `ns` since `from` (audit log offset), by ServiceAccount. */
  const writesIn = (ns: string, from: number): { a: number; b: number } => {
    const counts = countWrites(audit(), from, { namespace: ns, users: [userA, userB] });
    return { a: counts[userA]?.total ?? 0, b: counts[userB]?.total ?? 0 };
  };
  const claimOf = async (ns: string): Promise<string | undefined> =>
    (await t.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: namespaceClaimLeaseName(ns), namespace: home } }))?.spec
      ?.holderIdentity as string | undefined;
  const label = (ns: string, value: string): Promise<Obj> => t.patch(namespaceRef(ns), { metadata: { labels: { [key]: value } } });
  const libvirtVm = (ns: string, name: string): Obj => vm(ns, name, cls, image, { placement: { providerSelector: { matchLabels: { backend: 'libvirt' } } } });
  /** A VM applied, scheduled by its namespace's shard, its machine reported running as its provider role would, then Ready. */
  const runVm = async (ns: string, name: string): Promise<void> => {
    await t.apply(libvirtVm(ns, name));
    const machine = await t.exists(machineRef('libvirt', ns, name), () => true, 60_000);
    await t.applyStatus(machine, runningStatus('192.0.2.10'));
    await t.condition(libvirtVm(ns, name), 'Ready', 'True', 'Reconciled', 60_000);
  };

  /** A shard running as ServiceAccount `name` of the Lease namespace, leading on its own Lease there. */
  const startShard = async (name: string, selector: string): Promise<RoleProcess> =>
    startRole([
      'controller',
      '--kubeconfig',
      await serviceAccountKubeconfig(home, name),
      '--namespace-selector',
      selector,
      '--leader-election-namespace',
      home,
      '--lease-duration',
      '15',
    ]);

  beforeAll(async () => {
    const namespace = async (prefix: string): Promise<string> => {
      const { name, remove } = await createNamespace(prefix);
      removals.push(remove);
      return name;
    };
    home = await namespace('nsshards');
    moved = await namespace('nsshards-moved');
    kept = await namespace('nsshards-kept');
    key = `nsshards.test/${home}`;
    const [selectorA, selectorB] = [`${key} in (a, ab)`, `${key} in (ab, b)`];
    [leaseA, leaseB] = [controllerLeaseName(parseSelector(selectorA)), controllerLeaseName(parseSelector(selectorB))];
    [userA, userB] = [`system:serviceaccount:${home}:shard-a`, `system:serviceaccount:${home}:shard-b`];

    // What the install grants its controller (cluster-wide rules, Leases in its own namespace), and Namespaces read.
    const subjects = ['shard-a', 'shard-b'].map((name) => ({ kind: 'ServiceAccount', name, namespace: home }));
    for (const name of ['shard-a', 'shard-b']) await t.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: home } });
    const rules = [...controllerRules(), { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] }];
    await t.apply({ apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: home }, rules } as Obj);
    await t.apply({
      apiVersion: RBAC,
      kind: 'ClusterRoleBinding',
      metadata: { name: home },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: home },
      subjects,
    } as Obj);
    await t.apply({ apiVersion: RBAC, kind: 'Role', metadata: { name: 'leases', namespace: home }, rules: leaderElectionRules(true) } as Obj);
    await t.apply({
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: { name: 'leases', namespace: home },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'leases' },
      subjects,
    } as Obj);

    // A libvirt Provider in the namespace that moves, publishing one failure domain as its role would; none in the other.
    await t.apply(vmClass(cls));
    const img = await t.apply(vmImage(image));
    const p = await t.apply(provider(moved, 'kvm1', 'libvirt', { backend: 'libvirt' }));
    await t.applyStatus(p, failureDomains('libvirt', [{ name: 'libvirt-a' }]));
    await t.applyStatus(img, imageRows([{ ns: moved, provider: 'kvm1', ready: true }]));
    await label(moved, 'a');
    await label(kept, 'b');

    [shardA, shardB] = await Promise.all([startShard('shard-a', selectorA), startShard('shard-b', selectorB)]);
  }, 120_000);

  afterAll(async () => {
    try {
      for (const ns of [moved, kept]) if (ns) await t.deleteVirtualMachines(ns);
    } finally {
      for (const role of [shardA, shardB]) await role?.stop();
      await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMClass', metadata: { name: cls } });
      await t.delete({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VMImage', metadata: { name: image } });
      if (home) for (const kind of ['ClusterRoleBinding', 'ClusterRole']) await t.delete({ apiVersion: RBAC, kind, metadata: { name: home } });
      for (const remove of removals) await remove();
    }
  }, 180_000);

  it('each shard claims the namespaces its selector matches, on a Lease per namespace, leading on a Lease of its own', async () => {
    expect(leaseA).not.toBe(leaseB);
    await waitFor('each namespace claimed by its shard', async () => (await claimOf(moved)) === leaseA && (await claimOf(kept)) === leaseB, 60_000);
    for (const lease of [leaseA, leaseB]) {
      const held = await t.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: lease, namespace: home } });
      expect(held?.spec?.holderIdentity, `Lease ${lease}`).toBeTruthy();
    }
    // The claim goes with its namespace.
    const claim = await t.get({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: namespaceClaimLeaseName(moved), namespace: home } });
    expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Namespace', name: moved })]);
  });

  it("acts on each namespace's VMs from the shard holding its claim only", async () => {
    const from = auditOffset(audit());
    await runVm(moved, 'vm-1');
    await t.apply(vm(kept, 'nowhere', cls, image));
    await t.condition(vm(kept, 'nowhere', '', ''), 'Scheduled', 'False', 'NoProviderMatched', 60_000);
    await waitFor('the shards to report on their VMs', async () => (await vmReporters(moved)).length > 0 && (await vmReporters(kept)).length > 0, 30_000);

    expect(await vmReporters(moved)).toEqual([leaseA]);
    expect(await vmReporters(kept)).toEqual([leaseB]);
    const [inMoved, inKept] = [writesIn(moved, from), writesIn(kept, from)];
    expect(inMoved.a, 'shard A writes in its namespace').toBeGreaterThan(0);
    expect(inMoved.b, "shard B's writes in shard A's namespace").toBe(0);
    expect(inKept.b, 'shard B writes in its namespace').toBeGreaterThan(0);
    expect(inKept.a, "shard A's writes in shard B's namespace").toBe(0);
  });

  it('leaves a namespace relabelled to match both selectors to the shard holding its claim', async () => {
    const from = auditOffset(audit());
    await label(moved, 'ab');
    // New VMs while both selectors match: every shard that serves the namespace schedules them.
    for (const name of ['vm-2', 'vm-3']) await runVm(moved, name);

    expect(await claimOf(moved)).toBe(leaseA);
    expect(await vmReporters(moved)).toEqual([leaseA]);
    expect(writesIn(moved, from).b, "shard B's writes in the namespace shard A holds").toBe(0);
  });

  it('hands a relabelled namespace and its VMs over to the shard that now matches it, losing and duplicating nothing', async () => {
    const machinesBefore = await Promise.all(['vm-1', 'vm-2', 'vm-3'].map(async (name) => (await t.get(machineRef('libvirt', moved, name)))?.metadata.uid));

    await label(moved, 'b');
    await waitFor('the moved namespace claimed by shard B', async () => (await claimOf(moved)) === leaseB, 60_000);
    const from = auditOffset(audit());
    const onNamespace = async (): Promise<EventOf[]> =>
      (await eventsIn('default')).filter((e) => e.regarding?.kind === 'Namespace' && e.regarding.name === moved);
    const said = (events: EventOf[], reason: string): string[] =>
      events
        .filter((e) => e.reason === reason)
        .map((e) => e.reportingInstance ?? '')
        .sort();
    // Events are recorded after the claim is written: read them once B's is there (or as they are at the deadline).
    const handover = await waitFor(
      'the handover Events',
      async () => {
        const events = await onNamespace();
        return said(events, 'ShardClaimed').includes(leaseB) ? events : undefined;
      },
      30_000,
    ).catch(onNamespace);
    expect(said(handover, 'ShardReleased')).toEqual([leaseA]);
    expect(said(handover, 'ShardClaimed')).toEqual([leaseA, leaseB].sort());
    const released = handover.find((e) => e.reason === 'ShardReleased')?.eventTime ?? '';

    // Shard B carries on: it powers a VM off through its machine and schedules a new one.
    await t.patch(vm(moved, 'vm-1', '', ''), { spec: { desiredPowerState: 'PoweredOff' } });
    await t.exists(machineRef('libvirt', moved, 'vm-1'), (m) => m.spec?.desiredPowerState === 'PoweredOff', 60_000);
    await runVm(moved, 'vm-4');

    expect(await vmReporters(moved, released)).toEqual([leaseB]);
    const writes = writesIn(moved, from);
    expect(writes.b, 'shard B writes in the namespace it took over').toBeGreaterThan(0);
    expect(writes.a, "shard A's writes in the namespace it let go of").toBe(0);
    // The machines of before are the same objects; the new VM has one machine; every VM is Ready.
    const machinesAfter = await Promise.all(['vm-1', 'vm-2', 'vm-3'].map(async (name) => (await t.get(machineRef('libvirt', moved, name)))?.metadata.uid));
    expect(machinesAfter).toEqual(machinesBefore);
    const machines = await t.api.request<{ items: Obj[] }>('GET', `/apis/infrastructure.banlieue.io/v1alpha1/namespaces/${moved}/libvirtmachines`);
    expect(machines.items.map((m) => m.metadata.name).sort()).toEqual(['vm-1', 'vm-2', 'vm-3', 'vm-4']);
    for (const name of ['vm-2', 'vm-3', 'vm-4']) await t.condition(libvirtVm(moved, name), 'Ready', 'True', 'Reconciled');
  });
});
