// What wakes a machine's pass when its VM's guest reports an address: per vCenter session, one
// PropertyCollector of the role's own with a filter per VM whose machine waits for one (a pass
// adds its VM when it finds it running without an address and takes it out once it has one). A
// change of such a VM's guest addresses wakes the machine with that UUID at once, instead of at
// its next poll. Only wake-ups flow from here, never data: the pass reads the VM itself, as on a
// poll. Filters name their VM, with no view to traverse: vcsim deadlocks a collector whose view
// changes while it collects (a clone into a ContainerView, a ModifyListView), and the filters of
// the waiting VMs are all a watch costs. The watch lasts as long as its session; one that fails
// is made again, after a pause, with every VM still followed (those with an address by then wake
// at once: it came in between).
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../../runtime/log.js';
import { PropertyWatch, type ObjectUpdate } from '../client/property-watch.js';
import type { ManagedObjectReference } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';
import { isVsphereFault } from '../client/vsphere-fault.js';

/** Told the BIOS UUID of a VM whose guest changed. */
export type WakeMachine = (uuid: string) => void;

const GUEST_PATHS = ['guest.ipAddress', 'guest.net'];
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
  unfollow(client: VsphereClient, uuid: string): void {
    this.byClient.get(client)?.remove(uuid);
  }
}

/**
 * A watch made, the filter of each VM it follows, and the filters of VMs no longer followed,
 * destroyed between two waits (vcsim fails a wait whose collector loses a filter meanwhile).
 */
interface Running {
  readonly watch: PropertyWatch;
  readonly filters: Map<string, Promise<ManagedObjectReference>>;
  unwanted: Promise<ManagedObjectReference>[];
}

/** The watch of one session: the VMs it follows, and the filter of each while a watch runs. */
class SessionWatch {
  /** UUID by VM moref. */
  private readonly followed = new Map<string, { readonly ref: ManagedObjectReference; readonly uuid: string }>();
  /** The running watch and its filter of each VM followed; undefined while none runs. */
  private running: Running | undefined;
  /** Settles once the first watch exists (or could not be made). */
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
    const running = this.running;
    if (running === undefined) return false;
    try {
      if (running.filters.has(vm.value)) return true;
      await this.filterOf(running, vm);
      // An address that came after the pass read the VM and before its filter existed: vCenter sends
      // a new filter's values at once, vcsim only once something else changes. Read it once.
      if ((await this.client.properties.retrieveOne(vm, ['guest.ipAddress'])).props.has('guest.ipAddress')) this.wake(uuid);
      return true;
    } catch {
      // The watch is failing: it is made again with every VM followed; meanwhile the machine polls.
      return false;
    }
  }

  /** Its filter goes before the watch's next wait. */
  remove(uuid: string): void {
    const entry = [...this.followed.values()].find((f) => f.uuid === uuid);
    if (!entry) return;
    if (this.running) this.forget(this.running, entry.ref.value);
    else this.followed.delete(entry.ref.value);
  }

  /** The VM's filter on the running watch, made once. */
  private filterOf(running: Running, vm: ManagedObjectReference): Promise<ManagedObjectReference> {
    let filter = running.filters.get(vm.value);
    if (!filter) {
      filter = running.watch.addFilter({ propSet: [{ type: 'VirtualMachine', pathSet: GUEST_PATHS }], objectSet: [{ obj: vm }] });
      running.filters.set(vm.value, filter);
      filter.catch(() => running.filters.delete(vm.value));
    }
    return filter;
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
    // Closed before any watch was made: whoever waits for one gets none.
    started();
  }

  /**
   * The next updates. A VM followed and destroyed leaves its filter on vCenter; vcsim fails the
   * whole wait with ManagedObjectNotFound instead, naming the VM, which is then forgotten.
   */
  private async next(running: Running): Promise<ObjectUpdate[]> {
    try {
      return await running.watch.next({ maxWaitSeconds: MAX_WAIT_SECONDS });
    } catch (err) {
      const gone = isVsphereFault(err, 'ManagedObjectNotFound') ? err.detail?.childText('obj') : undefined;
      if (gone === undefined || !this.followed.has(gone)) throw err;
      this.forget(running, gone);
      return [];
    }
  }

  private forget(running: Running, vm: string): void {
    this.followed.delete(vm);
    const filter = running.filters.get(vm);
    running.filters.delete(vm);
    if (filter) running.unwanted.push(filter);
  }

  private async dropUnwanted(running: Running): Promise<void> {
    const unwanted = running.unwanted;
    running.unwanted = [];
    await Promise.all(unwanted.map((filter) => filter.then((ref) => running.watch.removeFilter(ref)).catch(() => undefined)));
  }

  /** One collector with a filter per VM followed, until the session closes or a call fails. */
  private async watchOnce(ready: () => void): Promise<void> {
    const watch = await PropertyWatch.create(this.client.session);
    try {
      const running: Running = { watch, filters: new Map(), unwanted: [] };
      await Promise.all([...this.followed.values()].map((f) => this.filterOf(running, f.ref)));
      this.running = running;
      ready();
      while (!this.client.closed) {
        await this.dropUnwanted(running);
        for (const update of await this.next(running)) {
          const uuid = this.followed.get(update.obj.value)?.uuid;
          if (uuid === undefined) continue;
          // Destroyed: nothing to follow.
          if (update.kind === 'leave') this.forget(running, update.obj.value);
          // A VM's filter comes first with what the VM has: an address it got before it was followed wakes it too.
          else if (update.kind === 'modify' || update.changes.get('guest.ipAddress') !== undefined) this.wake(uuid);
        }
      }
    } finally {
      this.running = undefined;
      await watch.close();
    }
  }
}
