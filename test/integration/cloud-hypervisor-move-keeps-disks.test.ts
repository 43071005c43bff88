// `clusterctl move` takes a Cluster's machines away from a management cluster
// without deleting their VMs: it pauses the Cluster, creates the objects in the
// target, then, in the source, annotates each object
// `clusterctl.cluster.x-k8s.io/delete-for-move`, removes its finalizers and
// deletes it (CAPI cmd/clusterctl/client/cluster/mover.go, deleteSourceObject).
// A Cloud Hypervisor host's role still pointed at the source cluster then no
// longer finds those machines in its cache. What they left on the host is not
// an orphan of a deletion anyone asked for: their VMs are the target's now, and
// a powered-off one has nothing but its directory and disk on the host
// (docs/adr/0022-when-banlieue-destroys-a-vm.md).
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OS_DISK } from '../../controller/backends/cloud-hypervisor/machine/os-disk.js';
import { machineDirs, TEST_IMAGE } from '../support/cloud-hypervisor/host.js';
import { chUuidOf, startChEnv, stopChEnv, type ChEnv } from '../support/cloud-hypervisor/env.js';
import { INFRA, TestApi, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();
const DELETE_FOR_MOVE = 'clusterctl.cluster.x-k8s.io/delete-for-move';
const CAPI_PAUSED = 'cluster.x-k8s.io/paused';

describe('clusterctl move away from a Cloud Hypervisor host (simulated VMM)', () => {
  let env: ChEnv;
  beforeAll(async () => {
    env = await startChEnv('ch-move');
  }, 240_000);
  afterAll(() => stopChEnv(env), 240_000);

  /**
   * Plants the record of a machine of this namespace whose deletion began on the host (its tombstone) and
   * that no longer exists, and waits until a sweep has finished that deletion: a sweep ran after it was planted.
   */
  const sweptOnce = async (n: number): Promise<void> => {
    const uuid = `0b5f7c1e-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
    const dir = join(env.host.config.stateRoot, uuid);
    mkdirSync(dir, { recursive: true });
    const witness = {
      owner: `CloudHypervisorMachine/${env.ns}/sweep-witness-${n}`,
      taps: [],
      diskDir: join(env.host.config.storageClasses.fast ?? '', uuid),
      deletionStartedAt: new Date().toISOString(),
    };
    writeFileSync(join(dir, 'machine.json'), JSON.stringify(witness));
    await waitFor(`a sweep to remove witness ${n}`, () => (existsSync(dir) ? undefined : true), 60_000).catch((err: unknown) => {
      // What the role said about its sweeps, to tell a sweep that did not run from one that kept the witness.
      const said = env.provider
        .logs()
        .split('\n')
        .filter((l) => /swe(ep|pt)|no longer exists/i.test(l))
        .slice(-10)
        .join('\n');
      throw new Error(`${String(err)}\n${said}`);
    });
  };

  it("leaves a moved machine's powered-off VM, its directory and its disk, on the host", async () => {
    const provider = await t.condition(env.world.provider, 'Ready', 'True', 'Reconciled', 60_000);
    const failureDomain = provider.status?.failureDomains?.[0]?.name as string;
    // A Cluster's machine, as CAPI creates it from a template: no VirtualMachine makes it again.
    const machine: Obj = {
      apiVersion: INFRA,
      kind: 'CloudHypervisorMachine',
      metadata: { name: 'moved', namespace: env.ns },
      spec: {
        providerRef: { name: env.world.provider.metadata.name },
        failureDomain,
        bootSource: { kind: 'image', image: TEST_IMAGE },
        cpus: { boot: 1 },
        memory: { sizeMiB: 128 },
        osDiskSizeGiB: 1,
        storageClass: 'fast',
      },
    };
    await t.apply(machine);
    await t.condition(machine, 'Ready', 'True', 'Reconciled', 120_000);
    await t.apply({ ...machine, spec: { ...machine.spec, desiredPowerState: 'PoweredOff' } });
    const off = await t.exists(machine, (m) => m.status?.observedPowerState === 'PoweredOff', 120_000);
    const uuid = chUuidOf(off.spec?.providerID as string);
    const diskDir = join(env.host.config.storageClasses.fast ?? '', uuid);
    expect(existsSync(diskDir)).toBe(true);

    // clusterctl move: the Cluster paused first, then the source object let go and deleted.
    await t.patch(machine, { metadata: { annotations: { [CAPI_PAUSED]: '' } } });
    await t.condition(machine, 'Paused', 'True', undefined, 60_000);
    await t.patch(machine, { metadata: { annotations: { [DELETE_FOR_MOVE]: '' }, finalizers: null } });
    await t.delete(machine);
    await t.gone(machine, 60_000);

    try {
      // Two sweeps that started after the machine left the role's cache.
      await sweptOnce(1);
      await sweptOnce(2);
      expect(machineDirs(env.host)).toContain(uuid);
      expect(existsSync(join(diskDir, OS_DISK))).toBe(true);
    } finally {
      // The target's host role would adopt it; here nothing will: the test removes it.
      rmSync(join(env.host.config.stateRoot, uuid), { recursive: true, force: true });
      rmSync(diskDir, { recursive: true, force: true });
    }
  }, 300_000);
});
