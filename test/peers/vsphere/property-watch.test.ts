// PropertyCollector watches against a real vcsim: WaitForUpdatesEx gives every object first,
// then what changed; the guest watch wakes a machine by its VM's UUID when the guest of a VM it
// follows reports an address, and stops with its session.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterInfo, DatacenterInfo } from '../../../controller/backends/vsphere/client/inventory.js';
import { PropertyWatch, type ObjectUpdate } from '../../../controller/backends/vsphere/client/property-watch.js';
import type { ManagedObjectReference } from '../../../controller/backends/vsphere/client/vim-types.js';
import { type VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { GuestWatches } from '../../../controller/backends/vsphere/machine/guest-watch.js';
import { waitFor } from '../../support/wait.js';
import { makeTemplate, vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

let sim: Vcsim;
let client: VsphereClient;
let dc: DatacenterInfo;
let cluster: ClusterInfo;
let template: ManagedObjectReference;
let clones = 0;

beforeAll(async () => {
  sim = await startVcsim({ datacenters: 1, clusters: 1 });
  client = await vcsimClient(sim);
  dc = first(await client.inventory.datacenters(), 'datacenter');
  cluster = first(await client.inventory.clusters(dc.ref), 'cluster');
  template = await makeTemplate(client, 'watch-template');
});

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

function first<T>(items: readonly T[], what: string): T {
  const [item] = items;
  if (item === undefined) throw new Error(`no ${what} in vcsim`);
  return item;
}

const clone = (): Promise<ManagedObjectReference> =>
  client.vms.clone(template, dc.vmFolder, `watched-${++clones}`, { location: { pool: cluster.resourcePool } });

const ofVm = (updates: readonly ObjectUpdate[], vm: ManagedObjectReference): ObjectUpdate[] => updates.filter((u) => u.obj.value === vm.value);

describe('vSphere PropertyCollector watch', () => {
  it("gives a filter's VM first as it is, then only what changed, and nothing of a filter removed", async () => {
    const [vm, other] = [await clone(), await clone()];
    const watch = await PropertyWatch.create(client.session);
    const filterOf = (obj: ManagedObjectReference): Promise<ManagedObjectReference> =>
      watch.addFilter({ propSet: [{ type: 'VirtualMachine', pathSet: ['name', 'guest.ipAddress'] }], objectSet: [{ obj }] });
    try {
      await filterOf(vm);
      const otherFilter = await filterOf(other);
      // A path without a value (no guest address yet) comes without one.
      const entered = (of: ManagedObjectReference, name: string): ObjectUpdate => ({
        kind: 'enter',
        obj: of,
        changes: new Map([
          ['name', expect.objectContaining({ text: name })],
          ['guest.ipAddress', undefined],
        ]),
      });
      const first = await watch.next({ maxWaitSeconds: 1 });
      expect(ofVm(first, vm)).toEqual([entered(vm, `watched-${clones - 1}`)]);
      expect(ofVm(first, other)).toEqual([entered(other, `watched-${clones}`)]);
      // Nothing changed since: the long poll ends empty.
      expect(await watch.next({ maxWaitSeconds: 1 })).toEqual([]);

      // The other VM's filter gone, its change is not told.
      await watch.removeFilter(otherFilter);
      await client.vms.reconfigure(other, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.6' } });
      await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.7' } });
      const changed = await watch.next({ maxWaitSeconds: 30 });
      expect(ofVm(changed, other)).toEqual([]);
      expect(ofVm(changed, vm)[0]).toEqual({ kind: 'modify', obj: vm, changes: new Map([['guest.ipAddress', expect.objectContaining({ text: '10.0.0.7' })]]) });
    } finally {
      await watch.close();
    }
  });

  it('ends a wait at once when cancelled, with no update', async () => {
    const vm = await clone();
    const watch = await PropertyWatch.create(client.session);
    try {
      await watch.addFilter({ propSet: [{ type: 'VirtualMachine', pathSet: ['name'] }], objectSet: [{ obj: vm }] });
      expect(ofVm(await watch.next({ maxWaitSeconds: 1 }), vm)).toHaveLength(1);
      // A wait of ten minutes, cancelled as soon as vcsim has it (a cancel before the wait ends nothing).
      const waiting = watch.next({ maxWaitSeconds: 600 });
      let ended = false;
      void waiting.finally(() => (ended = true));
      await waitFor('the cancel to end the wait', async () => {
        await watch.cancel();
        await delay(200);
        return ended ? true : undefined;
      });
      expect(await waiting).toEqual([]);
    } finally {
      await watch.close();
    }
  });

  it('wakes the machine of a followed VM by its UUID when its guest reports an address, and no more once unfollowed', async () => {
    const woken: string[] = [];
    const watches = new GuestWatches((uuid) => woken.push(uuid));
    const own = await vcsimClient(sim);
    const wakes = (uuid: string, what: string): Promise<true> => waitFor(what, () => (woken.includes(uuid) ? true : undefined), 30_000);
    try {
      const [first, second, third] = [await clone(), await clone(), await clone()];
      const [firstUuid, secondUuid, thirdUuid] = [await uuidOf(first), await uuidOf(second), await uuidOf(third)];
      expect(await watches.follow(own, first, firstUuid)).toBe(true);
      expect(await watches.follow(own, second, secondUuid)).toBe(true);
      expect(woken).toEqual([]);

      await client.vms.reconfigure(first, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.8' } });
      await wakes(firstUuid, 'the address to wake its machine');
      // Once or more (vcsim may send guest.ipAddress and guest.net apart): a wake-up is one more pass at most.
      expect(new Set(woken)).toEqual(new Set([firstUuid]));

      // Unfollowed, a VM's guest wakes nobody: its change comes before the second's, which does.
      watches.unfollow(own, firstUuid);
      const before = woken.length;
      await client.vms.reconfigure(first, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.9' } });
      await client.vms.reconfigure(second, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.10' } });
      await wakes(secondUuid, "the second VM's address to wake its machine");
      expect(new Set(woken.slice(before))).toEqual(new Set([secondUuid]));

      // A VM whose guest got its address before it was followed wakes its machine as it is added.
      await client.vms.reconfigure(third, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.11' } });
      expect(await watches.follow(own, third, thirdUuid)).toBe(true);
      await wakes(thirdUuid, 'an address reported before the VM was followed to wake its machine');

      // A followed VM destroyed behind the watch's back: the VMs still followed still wake their machines.
      const [doomed, kept] = [await clone(), await clone()];
      const keptUuid = await uuidOf(kept);
      expect(await watches.follow(own, doomed, await uuidOf(doomed))).toBe(true);
      expect(await watches.follow(own, kept, keptUuid)).toBe(true);
      await client.vms.destroy(doomed);
      await client.vms.reconfigure(kept, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.12' } });
      await wakes(keptUuid, 'a VM followed beside one destroyed to wake its machine');

      // VMs followed together, while the watch waits: each wakes its machine once its guest has an address.
      const many = await Promise.all(Array.from({ length: 8 }, () => clone()));
      const uuids = await Promise.all(many.map(uuidOf));
      expect(await Promise.all(many.map((vm, i) => watches.follow(own, vm, uuids[i] ?? '')))).toEqual(many.map(() => true));
      for (const [i, vm] of many.entries()) await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': `10.0.1.${i + 1}` } });
      await waitFor('every VM followed together to wake its machine', () => (uuids.every((u) => woken.includes(u)) ? true : undefined), 30_000);
    } finally {
      await own.close();
    }
    // Its session closed, nothing is followed there.
    expect(await watches.follow(own, await clone(), 'any')).toBe(false);
  });
});

const uuidOf = async (vm: ManagedObjectReference): Promise<string> => (await client.vms.summary(vm)).uuid?.toLowerCase() ?? '';
