// What wakes a machine's pass when its VM changes on vCenter: one PropertyCollector watch per
// session over every VM (a ContainerView of the root folder) on its guest's addresses as Tools
// reports them, and on config.uuid, the BIOS UUID a machine is known by. A VM entering the set (a
// clone finished) or its guest's addresses changing wakes the machine with that UUID at once, so a
// machine waiting for its guest's address looks again when Tools reports one instead of every poll
// period. Only wake-ups flow from here, never data: the pass reads the VM itself, as it would on a
// poll. Power is left to the passes' own reads and the resync, so a pass's own power-on wakes
// nothing. The watch lasts as long as its session; one that fails is created again after a pause.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from '../../../runtime/log.js';
import { PropertyWatch, type ObjectUpdate } from '../client/property-watch.js';
import type { VsphereClient } from '../client/vsphere-client.js';

/** Told the BIOS UUID (lower case) of a VM that changed. */
export type WakeMachine = (uuid: string) => void;

const WATCHED_PATHS = ['config.uuid', 'guest.ipAddress', 'guest.net'];
const MAX_WAIT_SECONDS = 60;
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 30_000;

export class GuestWatches {
  private readonly running = new WeakSet<VsphereClient>();

  constructor(
    private readonly wake: WakeMachine,
    private readonly log?: Logger,
  ) {}

  /** Starts the watch of `client`'s vCenter unless it runs; true: a change of a VM there wakes its machine. */
  follow(client: VsphereClient): boolean {
    if (client.closed) return false;
    if (!this.running.has(client)) {
      this.running.add(client);
      void this.run(client).finally(() => this.running.delete(client));
    }
    return true;
  }

  private async run(client: VsphereClient): Promise<void> {
    let retryMs = RETRY_FIRST_MS;
    while (!client.closed) {
      try {
        await watchVms(client, this.wake, () => (retryMs = RETRY_FIRST_MS));
      } catch (err) {
        if (client.closed) return;
        this.log?.warn({ err: err instanceof Error ? err.message : String(err), retryMs }, 'Watching VMs on vCenter failed; machines poll meanwhile');
        await delay(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
  }
}

/** One watch until the client closes (or a call fails): the UUID of each VM that changes goes to `wake`. */
async function watchVms(client: VsphereClient, wake: WakeMachine, answered: () => void): Promise<void> {
  const view = await client.properties.createContainerView(client.session.serviceContent.rootFolder, ['VirtualMachine'], true);
  let watch: PropertyWatch | undefined;
  try {
    watch = await PropertyWatch.create(client.session, {
      propSet: [{ type: 'VirtualMachine', pathSet: WATCHED_PATHS }],
      objectSet: [{ obj: view, skip: true, selectSet: [{ type: 'ContainerView', path: 'view' }] }],
    });
    const uuids = new Map<string, string>();
    // The first answer lists every VM as it is: nothing changed yet.
    remember(uuids, await watch.next({ maxWaitSeconds: MAX_WAIT_SECONDS }));
    answered();
    while (!client.closed) {
      const updates = await watch.next({ maxWaitSeconds: MAX_WAIT_SECONDS });
      answered();
      for (const uuid of remember(uuids, updates)) wake(uuid);
    }
  } finally {
    await watch?.close();
    await client.properties.destroyView(view);
  }
}

/** Keeps each VM's UUID by moref (an update names only what changed); the UUIDs of the VMs updated. */
function remember(uuids: Map<string, string>, updates: readonly ObjectUpdate[]): string[] {
  const changed: string[] = [];
  for (const update of updates) {
    const ref = update.obj.value;
    const uuid = update.changes.get('config.uuid')?.text?.toLowerCase() ?? uuids.get(ref);
    if (update.kind === 'leave') uuids.delete(ref);
    else if (uuid !== undefined) uuids.set(ref, uuid);
    if (uuid !== undefined) changed.push(uuid);
  }
  return changed;
}
