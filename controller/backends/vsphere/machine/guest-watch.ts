// What wakes a machine's pass when its VM's guest reports an address: per vCenter session, one
// PropertyCollector of the role's own with one filter naming every VM whose machine waits for one
// (a pass follows its VM when it finds it running without an address and unfollows it once it has
// one). A change of such a VM's guest addresses wakes the machine with that UUID at once, instead
// of at its next poll. Only wake-ups flow from here, never data: the pass reads the VM itself, as
// on a poll.
//
// What the watch costs vcsim shapes it. The filter names its VMs, with no view to traverse: vcsim
// deadlocks a collector whose view changes while it collects (a clone into a ContainerView, a
// ModifyListView). It is one filter, not one per VM: for each inventory change vcsim collects
// every filter once per filter, so a filter per VM costs the square of the VMs followed, and at
// a few dozen VMs under a burst of clones its waits fell minutes behind. A filter cannot change its
// VMs, so a VM to follow that it does not name ends the wait (CancelWaitForUpdates) and the filter
// is made again before the next; a VM unfollowed stays named, ignored, until the stale outnumber
// the followed. Filters change only between waits: vcsim drops a wait whose collector loses a
// filter meanwhile. The watch lasts as long as its session; one that fails is made again, after a
// pause, with every VM still followed (those with an address by then wake at once: it came in
// between).
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../../runtime/log.js';
import type { PropertyFilterSpec } from '../client/property-collector.js';
import { PropertyWatch, type ObjectUpdate } from '../client/property-watch.js';
import type { ManagedObjectReference } from '../client/vim-types.js';
import type { VsphereClient } from '../client/vsphere-client.js';

/** Told the BIOS UUID of a VM whose guest changed. */
export type WakeMachine = (uuid: string) => void;

const GUEST_PATHS = ['guest.ipAddress', 'guest.net'];
const MAX_WAIT_SECONDS = 60;
/** A cancel can reach vCenter before the wait it is meant for: it is sent again until the wait ends. */
const CANCEL_AGAIN_MS = 1_000;
/** VMs unfollowed the filter may keep naming before it is made again, beyond as many as it follows. */
const STALE_ALLOWED = 32;
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

interface Followed {
  readonly ref: ManagedObjectReference;
  readonly uuid: string;
  /** Its machine was woken since it was followed: once is enough, its pass reads the address. */
  woken: boolean;
}

/** A watch made: its collector, its filter and the VMs that filter names, and the wait out, if one is. */
interface Running {
  readonly watch: PropertyWatch;
  filter: ManagedObjectReference | undefined;
  named: ReadonlySet<string>;
  wait: Wait | undefined;
}

/** One WaitForUpdatesEx out; `cancelled` once a cancel was sent for it. */
interface Wait {
  cancelled: boolean;
}

/** Settles once the filter names the VMs followed before it was made: true, or false when the watch failed. */
class Naming {
  readonly done: Promise<boolean>;
  settle: (named: boolean) => void = () => undefined;
  constructor() {
    this.done = new Promise((settle) => (this.settle = settle));
  }
}

/** The watch of one session: the VMs it follows, and the running watch. */
class SessionWatch {
  /** By VM moref. */
  private readonly followed = new Map<string, Followed>();
  /** VMs followed since the filter was last made: it is made again, and their addresses read once, before the next wait. */
  private fresh = new Set<string>();
  private naming = new Naming();
  private running: Running | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: VsphereClient,
    private readonly wake: WakeMachine,
    private readonly log: Logger | undefined,
  ) {}

  add(vm: ManagedObjectReference, uuid: string): Promise<boolean> {
    const before = this.followed.get(vm.value);
    this.followed.set(vm.value, { ref: vm, uuid, woken: false });
    this.loop ??= this.run();
    if (this.running?.named.has(vm.value)) {
      if (before !== undefined && !before.woken) return Promise.resolve(true);
      // Named, but its changes woke nobody for a while (unfollowed, or woken once): read it once.
      return this.readAddresses([vm.value]).then(
        () => true,
        () => false,
      );
    }
    this.fresh.add(vm.value);
    this.interrupt();
    return this.naming.done;
  }

  /** The filter may keep naming it; its changes wake nobody. */
  remove(uuid: string): void {
    for (const [vm, followed] of this.followed) {
      if (followed.uuid === uuid) this.followed.delete(vm);
    }
  }

  private async run(): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (!this.client.closed) {
      try {
        await this.watchOnce(() => (retryMs = RETRY_FIRST_MS));
      } catch (err) {
        this.naming.settle(false);
        if (this.client.closed) break;
        this.log?.warn({ err: err instanceof Error ? err.message : String(err), retryMs }, 'Watching guests on vCenter failed; their machines poll meanwhile');
        await delay(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
    // Closed: whoever waits for the filter gets none.
    this.naming.settle(false);
  }

  /** One collector, its filter made again whenever it does not name a VM followed, until the session closes or a call fails. */
  private async watchOnce(named: () => void): Promise<void> {
    const watch = await PropertyWatch.create(this.client.session);
    const running: Running = { watch, filter: undefined, named: new Set(), wait: undefined };
    this.running = running;
    try {
      while (!this.client.closed) {
        await this.name(running);
        named();
        // Followed while the filter was made: made again before any wait.
        if (this.fresh.size > 0) continue;
        running.wait = { cancelled: false };
        const updates = await watch.next({ maxWaitSeconds: MAX_WAIT_SECONDS }).finally(() => (running.wait = undefined));
        for (const update of updates) this.apply(update);
      }
    } finally {
      this.running = undefined;
      await watch.close();
    }
  }

  /** Makes the filter again if it lacks a VM followed or names too many unfollowed; reads the fresh VMs' addresses once. */
  private async name(running: Running): Promise<void> {
    const naming = this.naming;
    this.naming = new Naming();
    const fresh = this.fresh;
    this.fresh = new Set();
    try {
      const followed = [...this.followed.values()];
      const stale = [...running.named].filter((vm) => !this.followed.has(vm)).length;
      if (followed.some((f) => !running.named.has(f.ref.value)) || stale > followed.length + STALE_ALLOWED) {
        // A call that fails ends this watch: what it leaves half made goes with its collector.
        if (running.filter !== undefined) await running.watch.removeFilter(running.filter);
        running.filter = followed.length > 0 ? await running.watch.addFilter(guestsOf(followed)) : undefined;
        running.named = new Set(followed.map((f) => f.ref.value));
      }
      await this.readAddresses([...fresh]);
      naming.settle(true);
    } catch (err) {
      naming.settle(false);
      throw err;
    }
  }

  /**
   * Wakes the machines of these VMs that have an address. One that came after the pass read the
   * VM and before the filter named it is not sent by vcsim until something else changes (vCenter
   * sends a new filter's values at once).
   */
  private async readAddresses(vms: readonly string[]): Promise<void> {
    const unread = vms.flatMap((vm) => this.followed.get(vm) ?? []);
    if (unread.length === 0) return;
    for (const vm of await this.client.properties.retrieve([guestsOf(unread, ['guest.ipAddress'])])) {
      if (vm.props.has('guest.ipAddress')) this.wakeOnce(vm.obj.value);
    }
  }

  /** Ends the running wait, so that the filter is made again with the VMs just followed. */
  private interrupt(): void {
    const running = this.running;
    const wait = running?.wait;
    if (running === undefined || wait === undefined || wait.cancelled) return;
    wait.cancelled = true;
    void this.cancel(running, wait);
  }

  private async cancel(running: Running, wait: Wait): Promise<void> {
    while (running.wait === wait && !this.client.closed) {
      await running.watch.cancel().catch(() => undefined);
      await delay(CANCEL_AGAIN_MS);
    }
  }

  private apply(update: ObjectUpdate): void {
    const vm = update.obj.value;
    if (!this.followed.has(vm)) return;
    // Destroyed: nothing to follow.
    if (update.kind === 'leave') this.followed.delete(vm);
    // A filter's VMs come first with what they have: an address one got before it was named wakes it too.
    else if (update.kind === 'modify' || update.changes.get('guest.ipAddress') !== undefined) this.wakeOnce(vm);
  }

  private wakeOnce(vm: string): void {
    const followed = this.followed.get(vm);
    if (followed === undefined || followed.woken) return;
    followed.woken = true;
    this.wake(followed.uuid);
  }
}

/** The guest paths of these VMs; one destroyed meanwhile is left out (vcsim would fail the whole wait). */
function guestsOf(vms: readonly Followed[], pathSet: readonly string[] = GUEST_PATHS): PropertyFilterSpec {
  return {
    propSet: [{ type: 'VirtualMachine', pathSet }],
    objectSet: vms.map((f) => ({ obj: f.ref })),
    reportMissingObjectsInResults: true,
  };
}
