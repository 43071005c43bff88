// What wakes a machine's pass when its VM's guest reports an address: per vCenter session, one
// PropertyCollector watch over a ListView of the VMs whose machines wait for one (a pass adds its
// VM when it finds it running without an address and takes it out once it has one). A change of
// such a VM's guest addresses wakes the machine with that UUID at once, instead of at its next
// poll. Only wake-ups flow from here, never data: the pass reads the VM itself, as on a poll.
// The list holds the waiting VMs only, so the watch costs nothing for the VMs that are Ready.
// The watch lasts as long as its session; one that fails is made again, after a pause, with every
// VM still followed (those with an address by then wake at once: it came in between).
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../../runtime/log.js';
import { PropertyWatch } from '../client/property-watch.js';
import type { ManagedObjectReference } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';

/** Told the BIOS UUID of a VM whose guest changed. */
export type WakeMachine = (uuid: string) => void;

const MAX_WAIT_SECONDS = 60;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class GuestWatches {
  private readonly byClient = new WeakMap<VsphereClient, SessionWatch>();

  constructor(
    private readonly wake: WakeMachine,
    private readonly log?: Logger,
  ) {}

  /** Watches the guest of `vm` (BIOS UUID `uuid`) until unfollowed; true once a change of its addresses wakes its machine. */
  follow(client: VsphereClient, vm: ManagedObjectReference, uuid: string): Promise<boolean> {
    if (client.closed) return Promise.resolve(false);
    let watch = this.byClient.get(client);
    if (!watch) {
      watch = new SessionWatch(client, this.wake, this.log);
      this.byClient.set(client, watch);
    }
    return watch.add(vm, uuid);
  }

  /** Stops watching the guest of the VM with `uuid` (it has an address, or its machine is gone). */
  unfollow(client: VsphereClient, uuid: string): Promise<void> {
    return this.byClient.get(client)?.remove(uuid) ?? Promise.resolve();
  }
}

/** The watch of one session: the VMs it follows, and the ListView its filter reads while it runs. */
class SessionWatch {
  /** UUID by VM moref. */
  private readonly followed = new Map<string, { readonly ref: ManagedObjectReference; readonly uuid: string }>();
  /** The running watch's view and what it holds; undefined while none runs. */
  private view: { readonly ref: ManagedObjectReference; readonly holds: Set<string> } | undefined;
  /** Settles once the first view exists (or could not be made). */
  private started: Promise<void> | undefined;

  constructor(
    private readonly client: VsphereClient,
    private readonly wake: WakeMachine,
    private readonly log: Logger | undefined,
  ) {}

  async add(vm: ManagedObjectReference, uuid: string): Promise<boolean> {
    this.followed.set(vm.value, { ref: vm, uuid });
    this.started ??= new Promise((started) => void this.run(started));
    await this.started;
    const view = this.view;
    if (view === undefined) return false;
    if (view.holds.has(vm.value)) return true;
    view.holds.add(vm.value);
    try {
      await this.client.properties.modifyListView(view.ref, { add: [vm] });
      return true;
    } catch {
      // The watch is failing: it is made again with every VM followed; meanwhile the machine polls.
      return false;
    }
  }

  async remove(uuid: string): Promise<void> {
    const entry = [...this.followed.values()].find((f) => f.uuid === uuid);
    if (!entry) return;
    this.followed.delete(entry.ref.value);
    const view = this.view;
    if (!view?.holds.delete(entry.ref.value)) return;
    await this.client.properties.modifyListView(view.ref, { remove: [entry.ref] }).catch(() => undefined);
  }

  private async run(started: () => void): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (!this.client.closed) {
      try {
        await this.watchOnce(() => {
          started();
          retryMs = RETRY_FIRST_MS;
        });
      } catch (err) {
        started();
        if (this.client.closed) break;
        this.log?.warn({ err: err instanceof Error ? err.message : String(err), retryMs }, 'Watching guests on vCenter failed; their machines poll meanwhile');
        await delay(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
    // Closed before any view was made: whoever waits for one gets none.
    started();
  }

  /** One ListView of the VMs followed and its watch, until the session closes or a call fails. */
  private async watchOnce(ready: () => void): Promise<void> {
    const followed = [...this.followed.values()];
    const ref = await this.client.properties.createListView(followed.map((f) => f.ref));
    let watch: PropertyWatch | undefined;
    try {
      watch = await PropertyWatch.create(this.client.session, {
        propSet: [{ type: 'VirtualMachine', pathSet: ['guest.ipAddress', 'guest.net'] }],
        objectSet: [{ obj: ref, skip: true, selectSet: [{ type: 'ListView', path: 'view' }] }],
      });
      this.view = { ref, holds: new Set(followed.map((f) => f.ref.value)) };
      ready();
      while (!this.client.closed) {
        for (const update of await watch.next({ maxWaitSeconds: MAX_WAIT_SECONDS })) {
          const uuid = this.followed.get(update.obj.value)?.uuid;
          if (uuid === undefined) continue;
          if (update.kind === 'leave') {
            // Destroyed (or taken out by remove): nothing to follow.
            this.followed.delete(update.obj.value);
            this.view?.holds.delete(update.obj.value);
            continue;
          }
          // A VM entering the view comes with what it has: an address it got before the view held it wakes it too.
          if (update.kind === 'modify' || update.changes.get('guest.ipAddress') !== undefined) this.wake(uuid);
        }
      }
    } finally {
      this.view = undefined;
      await watch?.close();
      await this.client.properties.destroyView(ref);
    }
  }
}
