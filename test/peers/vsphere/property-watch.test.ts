// PropertyCollector watches against a real vcsim: WaitForUpdatesEx gives every object first,
// then what changed; the guest watch wakes a machine by its VM's UUID when the guest reports an
// address or a clone appears, and stops with its session.
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

async function vmWatch(on: VsphereClient, pathSet: string[]): Promise<PropertyWatch> {
  const view = await on.properties.createContainerView(on.session.serviceContent.rootFolder, ['VirtualMachine'], true);
  return PropertyWatch.create(on.session, {
    propSet: [{ type: 'VirtualMachine', pathSet }],
    objectSet: [{ obj: view, skip: true, selectSet: [{ type: 'ContainerView', path: 'view' }] }],
  });
}

const ofVm = (updates: readonly ObjectUpdate[], vm: ManagedObjectReference): ObjectUpdate[] => updates.filter((u) => u.obj.value === vm.value);

describe('vSphere PropertyCollector watch', () => {
  it('lists every VM first, then only what changed: a guest address, a VM destroyed', async () => {
    const vm = await clone();
    const watch = await vmWatch(client, ['name', 'guest.ipAddress']);
    try {
      const first = await watch.next({ maxWaitSeconds: 1 });
      expect(ofVm(first, vm)).toEqual([{ kind: 'enter', obj: vm, changes: new Map([['name', expect.objectContaining({ text: `watched-${clones}` })]]) }]);
      expect(first.map((u) => u.kind)).toEqual(first.map(() => 'enter'));
      // Nothing changed since: the long poll ends empty.
      expect(await watch.next({ maxWaitSeconds: 1 })).toEqual([]);

      await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': '10.0.0.7' } });
      const changed = await watch.next({ maxWaitSeconds: 30 });
      expect(ofVm(changed, vm)).toEqual([{ kind: 'modify', obj: vm, changes: new Map([['guest.ipAddress', expect.objectContaining({ text: '10.0.0.7' })]]) }]);

      await client.vms.destroy(vm);
      const gone = await watch.next({ maxWaitSeconds: 30 });
      expect(ofVm(gone, vm).map((u) => u.kind)).toEqual(['leave']);
    } finally {
      await watch.close();
    }
  });

  it('wakes the machine of a VM by its UUID when its guest reports an address and when a clone appears', async () => {
    const woken: string[] = [];
    const watches = new GuestWatches((uuid) => woken.push(uuid));
    const own = await vcsimClient(sim);
    try {
      const vm = await clone();
      const uuid = await uuidOf(vm);
      expect(watches.follow(own)).toBe(true);
      // The watch's first answer (every VM as it is) wakes nobody; an address reported after it does
      // (a new one each try, in case the watch had not answered yet).
      let tries = 0;
      await waitFor(
        'an address to wake its machine',
        async () => {
          if (woken.includes(uuid)) return true;
          await client.vms.reconfigure(vm, { extraConfig: { 'SET.guest.ipAddress': `10.0.0.${++tries}` } });
          await delay(1_000);
          return undefined;
        },
        60_000,
      );
      expect(new Set(woken)).toEqual(new Set([uuid]));

      woken.length = 0;
      const cloned = await uuidOf(await clone());
      await waitFor('the clone to wake its machine', async () => (woken.includes(cloned) ? true : undefined), 30_000);
      expect(new Set(woken)).toEqual(new Set([cloned]));
    } finally {
      await own.close();
    }
    // Its session closed, the watch is over: it follows nothing.
    expect(watches.follow(own)).toBe(false);
  });
});

const uuidOf = async (vm: ManagedObjectReference): Promise<string> => (await client.vms.summary(vm)).uuid?.toLowerCase() ?? '';
