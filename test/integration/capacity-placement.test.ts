// Capacity-aware placement on three libvirt hosts (private libvirtds, test
// driver), each its Provider's one failure domain: the Providers publish their
// pools' free space, ten VMs of one app created at once spread over the three
// within maxSkew, a VM skips a host whose pool is full (named in its Scheduled
// message), and with every pool full a VM waits InsufficientCapacity naming
// each. Through the real API server, the controller and the libvirt provider role.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { startLibvirtd, type Libvirtd } from '../peers/libvirt/libvirtd.js';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { TestApi, vm, type Obj } from '../support/fixtures.js';
import { createNamespace } from '../support/kube.js';
import { anchorClient, libvirtProviderArgs, libvirtWorld, makeImageVolume, TEST_POOL } from '../support/libvirt/env.js';
import { waitFor } from '../support/wait.js';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

interface Host {
  readonly name: string;
  readonly daemon: Libvirtd;
  readonly anchor: LibvirtClient;
  readonly provider: Obj;
}

const HOSTS = ['kvm-a', 'kvm-b', 'kvm-c'];
const GIB = 1024 ** 3;

describe('capacity-aware placement', () => {
  const t = new TestApi();
  let ns: string;
  let removeNs: () => Promise<void>;
  const hosts: Host[] = [];
  let vmClass: Obj;
  let vmImage: Obj;
  let controller: RoleProcess;
  let providerRole: RoleProcess;

  const scheduledOf = (o: Obj | undefined): Condition | undefined => (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === 'Scheduled');
  const failureDomainOf = (o: Obj | undefined): string | undefined => (o?.status?.scheduled as { failureDomain?: string } | undefined)?.failureDomain;
  const appVm = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): Obj =>
    vm(ns, name, vmClass.metadata.name, vmImage.metadata.name, spec, labels);

  /** The free GiB of the test pool a Provider publishes. */
  const publishedFreeGiB = async (host: Host): Promise<number | undefined> => {
    const live = await t.get(host.provider);
    const [fd] = (live?.status?.failureDomains ?? []) as { capacity?: { storage?: { target: string; freeGiB: number }[] } }[];
    return fd?.capacity?.storage?.find((s) => s.target === TEST_POOL)?.freeGiB;
  };

  /** Leave `freeGiB` GiB free in the host's pool (a volume taking the rest), and wait until its Provider publishes it. */
  const fillPool = async (host: Host, name: string, freeGiB: number): Promise<void> => {
    const pool = await host.anchor.pools.lookupByName(TEST_POOL);
    const { availableBytes } = await host.anchor.pools.info(pool);
    const bytes = availableBytes - freeGiB * GIB;
    await host.anchor.volumes.create(pool, `<volume><name>${name}</name><capacity unit='bytes'>${bytes}</capacity></volume>`);
    await waitFor(`Provider ${host.name} to publish ${freeGiB} GiB free in ${TEST_POOL}`, async () => (await publishedFreeGiB(host)) === freeGiB, 60_000);
  };

  beforeAll(async () => {
    ({ name: ns, remove: removeNs } = await createNamespace('capacity'));
    for (const name of HOSTS) {
      const daemon = await startLibvirtd();
      const anchor = await anchorClient(daemon);
      await makeImageVolume(anchor, await anchor.pools.lookupByName(TEST_POOL));
      const world = libvirtWorld(ns, daemon, `${name}-${Math.random().toString(36).slice(2, 7)}`);
      const secret = { ...world.secret, metadata: { ...world.secret.metadata, name: `${name}-creds` } };
      const spec = world.provider.spec as { connection: Record<string, unknown> };
      const provider = {
        ...world.provider,
        metadata: { ...world.provider.metadata, name },
        spec: { ...spec, connection: { ...spec.connection, credentialsRef: { name: `${name}-creds` } } },
      };
      for (const obj of [secret, provider]) await t.apply(obj);
      hosts.push({ name, daemon, anchor, provider });
      if (name === HOSTS[0]) ({ vmClass, vmImage } = world);
    }
    for (const obj of [vmClass, vmImage]) await t.apply(obj);
    controller = await startRole(['controller', '--kubeconfig', inject('kubeconfig'), '--no-leader-elect', '--namespace', ns]);
    providerRole = await startRole(libvirtProviderArgs(ns));
    for (const host of hosts) await t.condition(host.provider, 'Ready', 'True', 'Reconciled', 60_000);
  }, 300_000);

  afterAll(async () => {
    try {
      await t.deleteVirtualMachines(ns);
    } finally {
      await controller?.stop();
      await providerRole?.stop();
      for (const host of hosts) {
        await host.anchor.close();
        await host.daemon.stop();
      }
      for (const obj of [vmClass, vmImage]) if (obj) await t.delete(obj);
      await removeNs?.();
    }
  }, 300_000);

  it('publishes each host’s CPUs, memory and free pool space as its failure domain’s capacity', async () => {
    const live = await t.get(hosts[0]?.provider as Obj);
    const [fd] = live?.status?.failureDomains as { capacity?: Record<string, unknown> }[];
    // The test driver's host: 16 CPUs, a 100 GiB pool less the 1 GiB image volume.
    expect(fd?.capacity).toMatchObject({ cpus: 16, storage: [{ target: TEST_POOL, freeGiB: 99, capacityGiB: 100 }] });
  });

  it('spreads ten VMs of one app, created at once, over the three failure domains within maxSkew 1', async () => {
    const spread = { topologySpread: [{ maxSkew: 1, topologyKey: 'name', labelSelector: { matchLabels: { app: 'web' } } }] };
    const vms = Array.from({ length: 10 }, (_, i) => appVm(`web-${i}`, { placement: spread }, { app: 'web' }));
    await Promise.all(vms.map((v) => t.apply(v)));
    const placed = await Promise.all(vms.map((v) => t.condition(v, 'Scheduled', 'True', 'Scheduled', 120_000)));
    const counts = new Map(HOSTS.map((h) => [h, 0]));
    for (const v of placed) counts.set(failureDomainOf(v) ?? '', (counts.get(failureDomainOf(v) ?? '') ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(HOSTS);
    expect(Math.max(...counts.values()) - Math.min(...counts.values())).toBeLessThanOrEqual(1);
    expect(scheduledOf(placed[0])?.message).toMatch(/skew \d \(maxSkew 1\) over name/);
    // Each was created where it was placed.
    for (const v of placed) await t.condition(v, 'Ready', 'True', 'Reconciled', 180_000);
  });

  it('leaves out a host whose pool is full, naming the pool and its free space, and places the VM where there is room', async () => {
    const [full] = hosts as [Host];
    await fillPool(full, 'filler-a', 1);
    const roomy = appVm('roomy');
    await t.apply(roomy);
    const live = await t.condition(roomy, 'Scheduled', 'True', 'Scheduled', 60_000);
    expect(failureDomainOf(live)).not.toBe(full.name);
    // The class's disks: 2 + 1 GiB on the pool.
    expect(scheduledOf(live)?.message).toContain(
      `without room: ${full.name}/${full.name}: storage ${TEST_POOL} on Provider ${full.name}: 1 GiB free, 3 GiB needed`,
    );
    // Its disks taken from that pool before the next case counts what is left.
    await t.condition(roomy, 'Ready', 'True', 'Reconciled', 180_000);
  });

  it('keeps a VM unscheduled with InsufficientCapacity, naming every host’s full pool, when none has room', async () => {
    const [, ...others] = hosts;
    for (const host of others) await fillPool(host, `filler-${host.name}`, 2);
    const nowhere = appVm('nowhere');
    await t.apply(nowhere);
    const live = await t.condition(nowhere, 'Scheduled', 'False', 'InsufficientCapacity', 60_000);
    const message = scheduledOf(live)?.message ?? '';
    for (const host of hosts) expect(message).toContain(`${host.name}/${host.name}: storage ${TEST_POOL} on Provider ${host.name}:`);
    expect(message).toMatch(/2 GiB free, 3 GiB needed/);
    expect(live.status?.scheduled).toBeUndefined();
  });
});
