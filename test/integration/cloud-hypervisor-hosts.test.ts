// Two Cloud Hypervisor hosts in one namespace, as `banlieue host install` sets
// them up: each host's role runs as the host's own identity with
// `--provider <its Provider>` and a Lease of its own, and serves only its own
// Provider, its own VMImage row and the machines placed on it. Host b's guest
// ignores the ACPI power button, so a power-off there waits out the grace
// period (Stopping); host b is also taken over its capacity threshold and back,
// and sweeps what a machine removed behind its back left on it. A host's
// identity reads only the user-data of machines still to be created.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { tapName } from '../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { FieldManager } from '../../infra/api/well-known.js';
import { simulatorPeer } from '../peers/cloud-hypervisor/vmm-peers.js';
import { chProvider, chWorld, createTestHost, machineDirs, hostConfigEnv, type TestHost } from '../support/cloud-hypervisor/host.js';
import { chUuidOf, hostKubeconfig } from '../support/cloud-hypervisor/env.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { eventsWith } from '../support/events.js';
import { createNamespace } from '../support/kube.js';
import { Actor, impersonatedServiceAccount } from '../support/tenant.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const MANAGER = 'banlieue.io/provider-cloud-hypervisor';

interface Host {
  readonly name: 'a' | 'b' | 'c';
  readonly provider: Obj;
  readonly host: TestHost;
  readonly kubeconfig: string;
  role: RoleProcess;
}

/** The host's role as its unit runs it: its namespace, its Provider, its Lease (the default one for --provider). */
function startHostRole(ns: string, h: Pick<Host, 'provider' | 'host' | 'kubeconfig'>): Promise<RoleProcess> {
  const args = [
    'provider',
    'cloud-hypervisor',
    '--kubeconfig',
    h.kubeconfig,
    '--namespace',
    ns,
    '--provider',
    h.provider.metadata.name,
    '--leader-election-namespace',
    ns,
    '--poll-period',
    '1',
    '--rediscover-period',
    '3',
  ];
  return startRole(args, { env: hostConfigEnv(h.host) });
}

/** The field managers of an object's status subresource. */
async function statusManagers(obj: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<string[]> {
  const live = await t.get(obj);
  const fields = (live?.metadata as { managedFields?: { manager: string; subresource?: string }[] } | undefined)?.managedFields ?? [];
  return fields.filter((f) => f.subresource === 'status').map((f) => f.manager);
}

/**
 * The host writers of a Provider's status: its host's manager alone. The controller's, which says
 * NoProviderRole while no host serves it yet, may be there too; no other host's ever is.
 */
async function providerStatusWriters(provider: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): Promise<string[]> {
  return (await statusManagers(provider)).filter((m) => m !== 'banlieue.io/controller');
}

async function warnings(ns: string, kind: string, name: string): Promise<string[]> {
  const list = await t.api.request<{ items: { type: string; reason: string; regarding?: { kind?: string; name?: string } }[] }>(
    'GET',
    `/apis/events.k8s.io/v1/namespaces/${ns}/events`,
  );
  return list.items.filter((e) => e.type === 'Warning' && e.regarding?.kind === kind && e.regarding.name === name).map((e) => e.reason);
}

describe('Cloud Hypervisor hosts sharing a namespace', () => {
  let ns: string;
  let removeNs: () => Promise<void>;
  let world: ReturnType<typeof chWorld>;
  let controller: RoleProcess | undefined;
  const hosts: Host[] = [];
  const byName = (name: Host['name']): Host => hosts.find((h) => h.name === name) as Host;
  const hostVm = (name: string, on: Host['name'], address: string, spec: Record<string, unknown> = {}): Obj =>
    vm(ns, name, world.vmClass.metadata.name, world.vmImage.metadata.name, {
      placement: { providerSelector: { matchLabels: { host: on } } },
      networkOverrides: [{ name: 'eth0', static: { address, prefix: 24 } }],
      ...spec,
    });

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('ch-hosts'));
    const a = await createTestHost(simulatorPeer, { hostName: 'hosta', simulator: { guest: 'acpi' } });
    // A guest that ignores the power button: a power-off takes the whole grace period.
    const b = await createTestHost(simulatorPeer, { hostName: 'hostb', simulator: { guest: 'halt' }, powerOffGraceSeconds: 20 });
    world = chWorld(ns, a, Math.random().toString(36).slice(2, 7));
    for (const obj of [world.vmClass, world.vmImage]) await t.apply(obj);
    for (const [name, host] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const provider = chProvider(ns, host, `host-${name}`);
      provider.metadata.labels = { host: name };
      await t.apply(provider);
      const kubeconfig = await hostKubeconfig(ns, host, provider.metadata.name);
      hosts.push({ name, provider, host, kubeconfig, role: await startHostRole(ns, { provider, host, kubeconfig }) });
    }
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
  }, 240_000);

  afterAll(async () => {
    try {
      await t.deleteVirtualMachines(ns);
    } finally {
      await controller?.stop();
      for (const h of hosts) await h.role.stop();
      for (const obj of [world.vmClass, world.vmImage]) await t.delete(obj);
      await removeNs();
      for (const h of hosts) await h.host.remove();
    }
    for (const h of hosts) expect(h.host.violations()).toEqual([]);
  }, 300_000);

  it('each host publishes its own Provider and image row under its own field manager, holding a Lease of its own', async () => {
    for (const h of hosts) {
      const provider = await t.condition(h.provider, 'Ready', 'True', 'Reconciled', 60_000);
      expect(provider.status?.failureDomains).toMatchObject([{ name: `host-${h.name}`, labels: { host: `host${h.name}` } }]);
      expect(await providerStatusWriters(h.provider)).toEqual([`${MANAGER}/host-${h.name}`]);
      const lease = await t.exists(
        { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `banlieue-provider-cloud-hypervisor-host-${h.name}`, namespace: ns } },
        (o) => Boolean((o.spec as { holderIdentity?: string } | undefined)?.holderIdentity),
        60_000,
      );
      expect(lease.metadata.name).toBe(`banlieue-provider-cloud-hypervisor-host-${h.name}`);
    }
    const rows = (o: Obj): { providerName: string; ready: boolean; resolvedRef?: string }[] =>
      (o.status?.perProvider as { providerName: string; ready: boolean; resolvedRef?: string }[] | undefined) ?? [];
    const image = await t.exists(world.vmImage, (o) => rows(o).filter((r) => r.ready).length === 2, 60_000);
    expect(
      rows(image)
        .map((r) => [r.providerName, r.resolvedRef])
        .sort(),
    ).toEqual(hosts.map((h) => [`host-${h.name}`, join(h.host.config.imageDir, 'halt.raw')]));
  });

  it('a host over its capacity threshold withdraws its failure domain (Ready=False CapacityExceeded), then publishes it again; the other host is untouched', async () => {
    const b = byName('b');
    const healthy = readFileSync(b.host.configPath, 'utf8');
    const over = parse(healthy) as { capacity: Record<string, number> };
    over.capacity.maxMemoryUsedPercent = 1;
    await b.role.stop();
    writeFileSync(b.host.configPath, stringify(over));
    b.role = await startHostRole(ns, b);
    const withdrawn = await t.condition(b.provider, 'Ready', 'False', 'CapacityExceeded', 60_000);
    expect(withdrawn.status?.failureDomains).toBeUndefined();
    const ready = (withdrawn.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'Ready');
    expect(ready?.message).toMatch(/^failure domains withdrawn: memory \d+% used, at or over capacity\.maxMemoryUsedPercent 1$/);
    await t.condition(b.provider, 'ProviderReachable', 'True', 'Reconciled');
    await t.condition(byName('a').provider, 'Ready', 'True', 'Reconciled');

    await b.role.stop();
    writeFileSync(b.host.configPath, healthy);
    b.role = await startHostRole(ns, b);
    const back = await t.condition(b.provider, 'Ready', 'True', 'Reconciled', 60_000);
    expect(back.status?.failureDomains).toMatchObject([{ name: 'host-b' }]);
  }, 180_000);

  it("each host runs only the machines placed on it, and neither writes the other's status", async () => {
    await t.apply(hostVm('vm-a', 'a', '10.88.2.10'));
    await t.apply(hostVm('vm-b', 'b', '10.88.2.11'));
    for (const h of hosts) {
      const name = `vm-${h.name}`;
      await t.condition(vm(ns, name, '', ''), 'Ready', 'True', 'Reconciled', 120_000);
      const machine = await t.get(machineRef('cloud-hypervisor', ns, name));
      expect(machine?.status).toMatchObject({ hostUid: `host${h.name}`, failureDomain: `host-${h.name}` });
      expect(machineDirs(h.host)).toEqual([chUuidOf(machine?.spec?.providerID as string)]);
      expect(await statusManagers(machineRef('cloud-hypervisor', ns, name))).toEqual([`${MANAGER}/host-${h.name}`]);
    }
    // Each host's role records its Events (its reporting controller is the role's kind, one qualified name).
    for (const h of hosts) {
      const seen = await eventsWith(t.api, ns, `vm-${h.name}`, ['Created', 'PoweredOn']);
      expect(seen.filter((e) => e.regarding?.kind === 'CloudHypervisorMachine').map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'PoweredOn']));
    }
    // Neither host met the other's Provider or machine: nothing refused, nothing forbidden.
    for (const h of hosts) expect(h.role.logs()).not.toMatch(/WrongHost|forbidden/i);
    for (const h of hosts) expect(await providerStatusWriters(h.provider)).toEqual([`${MANAGER}/host-${h.name}`]);
  }, 180_000);

  it("a host's identity reads the user-data of its namespace's machines still to be created, and no other Secret", async () => {
    const hostA = new Actor(impersonatedServiceAccount(ns, 'banlieue-host-hosta'));
    const unrelated = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'not-for-hosts', namespace: ns } };
    await t.apply({ ...unrelated, stringData: { password: 'for the app next door' } });
    await expect(hostA.get(unrelated)).rejects.toThrow(/forbidden/);

    // Ready means host a read the machine's user-data; provisioned, it needs it no more and may not read it.
    const userData = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'reads-1-source', namespace: ns } };
    await t.apply({ ...userData, stringData: { 'user-data': '#cloud-config\n' } });
    await t.apply(hostVm('reads-1', 'a', '10.88.2.20', { userData: { secretRef: { name: 'reads-1-source' } } }));
    await t.condition(vm(ns, 'reads-1', '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    const rendered = (await t.get(machineRef('cloud-hypervisor', ns, 'reads-1')))?.spec?.userDataSecretRef as { name: string };
    const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'banlieue-cloud-hypervisor-host-reads', namespace: ns } };
    await waitFor(
      "the provisioned machine's user-data off the hosts' list",
      async () => (JSON.stringify(((await t.get(role)) as { rules?: unknown } | undefined)?.rules ?? []).includes(rendered.name) ? undefined : true),
      60_000,
    );
    await expect(hostA.get({ apiVersion: 'v1', kind: 'Secret', metadata: { name: rendered.name, namespace: ns } })).rejects.toThrow(/forbidden/);
    await expect(hostA.get(userData)).rejects.toThrow(/forbidden/);
    await t.delete(vm(ns, 'reads-1', '', ''));
    await t.gone(vm(ns, 'reads-1', '', ''), 120_000);
  }, 180_000);

  it('a power-off the guest does not answer reads Stopping until the grace period ends, then the VM is off', async () => {
    await t.apply(hostVm('vm-b', 'b', '10.88.2.11', { desiredPowerState: 'PoweredOff' }));
    const stopping = await t.condition(machineRef('cloud-hypervisor', ns, 'vm-b'), 'Ready', 'False', 'Stopping', 60_000);
    expect(stopping.status?.taskRef).toMatch(/^vm\.power-button@/);
    await t.exists(vm(ns, 'vm-b', '', ''), (o) => o.status?.observedPowerState === 'PoweredOff', 120_000);
    await t.condition(machineRef('cloud-hypervisor', ns, 'vm-b'), 'Ready', 'True', 'Reconciled', 60_000);
    // A power-off asked for is no trouble: no Warning Event says it.
    expect(await warnings(ns, 'CloudHypervisorMachine', 'vm-b')).not.toContain('Stopping');
  }, 180_000);

  it("a machine whose finalizer was removed by hand while its host's role was down keeps its directory, disk and taps, with a warning; nothing else is touched", async () => {
    const b = byName('b');
    const machine = await t.get(machineRef('cloud-hypervisor', ns, 'vm-b'));
    const uuid = chUuidOf(machine?.spec?.providerID as string);
    const diskDir = join(b.host.config.storageClasses.fast ?? '', uuid);
    expect(existsSync(diskDir)).toBe(true);
    // Not this role's to judge: another namespace's mark, and no record at all.
    const foreign = ['0b5f7c1e-0000-4000-8000-000000000001', '0b5f7c1e-0000-4000-8000-000000000002'].map((u) => join(b.host.config.stateRoot, u));
    mkdirSync(foreign[0] ?? '', { recursive: true });
    writeFileSync(
      join(foreign[0] ?? '', 'machine.json'),
      JSON.stringify({ owner: 'CloudHypervisorMachine/elsewhere/x', taps: [], diskDir: join(b.host.config.storageClasses.fast ?? '', 'x') }),
    );
    mkdirSync(foreign[1] ?? '', { recursive: true });

    await b.role.stop();
    await t.delete(vm(ns, 'vm-b', '', ''));
    // With its role down, the machine's finalizer is removed by hand: nothing on the host was cleaned up.
    await t.exists(machineRef('cloud-hypervisor', ns, 'vm-b'), (o) => Boolean(o.metadata.deletionTimestamp), 60_000);
    await t.patch(machineRef('cloud-hypervisor', ns, 'vm-b'), { metadata: { finalizers: null } });
    await t.gone(vm(ns, 'vm-b', '', ''), 60_000);
    expect(machineDirs(b.host)).toContain(uuid);

    b.role = await startHostRole(ns, b);
    // Its deletion never began on the host: nobody asked banlieue to destroy its disk there.
    const saysLeft = (): boolean =>
      b.role
        .logs()
        .split('\n')
        .some((line) => line.includes(uuid) && line.includes('its deletion never began on this host'));
    await waitFor('the sweep to leave the directory, saying so', () => (saysLeft() ? true : undefined), 60_000);
    expect(machineDirs(b.host)).toContain(uuid);
    expect(existsSync(diskDir)).toBe(true);
    expect(await b.host.links()).toContain(tapName(uuid, 0));
    expect(foreign.map((d) => existsSync(d))).toEqual([true, true]);
    expect(machineDirs(byName('a').host)).toHaveLength(1);
    for (const d of foreign) rmSync(d, { recursive: true, force: true });
  }, 180_000);

  it('a host whose Provider is named with 253 characters serves it: its field manager, Lease and Events fit their limits', async () => {
    const name = `${'host-c.'.repeat(36)}x`;
    expect(name).toHaveLength(253);
    const host = await createTestHost(simulatorPeer, { hostName: 'hostc', simulator: { guest: 'acpi' } });
    const provider = chProvider(ns, host, name);
    provider.metadata.labels = { host: 'c' };
    await t.apply(provider);
    const kubeconfig = await hostKubeconfig(ns, host, name);
    hosts.push({ name: 'c', provider, host, kubeconfig, role: await startHostRole(ns, { provider, host, kubeconfig }) });
    await t.condition(provider, 'Ready', 'True', 'Reconciled', 60_000);
    const manager = FieldManager.provider('cloud-hypervisor', name);
    expect(manager.length).toBeLessThanOrEqual(128);
    expect(await providerStatusWriters(provider)).toEqual([manager]);
    const leases = await t.api.request<{ items: Obj[] }>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`);
    expect(leases.items.map((l) => l.metadata.name).filter((n) => n.startsWith('banlieue-provider-cloud-hypervisor-host-c.'))).toHaveLength(1);

    await t.apply(hostVm('vm-c', 'c', '10.88.2.12'));
    await t.condition(vm(ns, 'vm-c', '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    expect(await statusManagers(machineRef('cloud-hypervisor', ns, 'vm-c'))).toEqual([manager]);
    const seen = await eventsWith(t.api, ns, 'vm-c', ['Created', 'PoweredOn']);
    expect(seen.filter((e) => e.regarding?.kind === 'CloudHypervisorMachine').map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'PoweredOn']));
    expect(byName('c').role.logs()).not.toMatch(/Could not record event/);
  }, 180_000);
  it('a VM running on a host that goes over its capacity threshold keeps running there, saying so; a new VM goes to the other host', async () => {
    const either = {
      placement: { providerSelector: { matchExpressions: [{ key: 'host', operator: 'In', values: ['a', 'b'] }] } },
      migrationPolicy: 'automatic',
    };
    await t.apply(hostVm('vm-either', 'a', '10.88.2.13', either));
    await t.condition(vm(ns, 'vm-either', '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    const before = await t.get(machineRef('cloud-hypervisor', ns, 'vm-either'));
    expect(before?.spec?.providerRef).toEqual({ name: 'host-a' });

    const a = byName('a');
    const healthy = readFileSync(a.host.configPath, 'utf8');
    const over = parse(healthy) as { capacity: Record<string, number> };
    over.capacity.maxMemoryUsedPercent = 1;
    await a.role.stop();
    writeFileSync(a.host.configPath, stringify(over));
    a.role = await startHostRole(ns, a);
    await t.condition(a.provider, 'Ready', 'False', 'CapacityExceeded', 60_000);

    const said = await t.condition(vm(ns, 'vm-either', '', ''), 'PlacementValid', 'True', 'FailureDomainWithdrawn', 60_000);
    const placementValid = (said.status?.conditions as { type: string; message: string }[]).find((c) => c.type === 'PlacementValid');
    expect(placementValid?.message).toMatch(
      /^Provider host-a no longer offers failure domain host-a to new VMs \(CapacityExceeded: failure domains withdrawn: memory \d+% used/,
    );
    const machine = await t.get(machineRef('cloud-hypervisor', ns, 'vm-either'));
    expect({ uid: machine?.metadata.uid, providerID: machine?.spec?.providerID }).toEqual({ uid: before?.metadata.uid, providerID: before?.spec?.providerID });
    expect(machineDirs(a.host)).toContain(chUuidOf(before?.spec?.providerID as string));
    await t.condition(vm(ns, 'vm-either', '', ''), 'Ready', 'True', 'Reconciled');

    await t.apply(hostVm('vm-new', 'a', '10.88.2.14', either));
    const placed = await t.exists(machineRef('cloud-hypervisor', ns, 'vm-new'), (m) => Boolean(m.spec?.providerRef), 60_000);
    expect(placed.spec?.providerRef).toEqual({ name: 'host-b' });

    await a.role.stop();
    writeFileSync(a.host.configPath, healthy);
    a.role = await startHostRole(ns, a);
    await t.condition(a.provider, 'Ready', 'True', 'Reconciled', 60_000);
    await t.condition(vm(ns, 'vm-either', '', ''), 'PlacementValid', 'True', 'PlacementMatches', 60_000);
  }, 240_000);
});
