// The bench's VMware Tools: a guest IP on each new VM of a prefix as soon as vcsim shows it,
// seen through a PropertyCollector watch (one long poll, not a listing of every VM per round),
// the same for whichever side made the VM.
import { PropertyWatch } from '../../controller/backends/vsphere/client/property-watch.js';
import type { VsphereClient } from '../../controller/backends/vsphere/client/vsphere-client.js';
import type { ManagedObjectReference } from '../../controller/backends/vsphere/client/vim-types.js';
import { toBoolean } from '../../controller/backends/vsphere/client/wire-values.js';

interface Guest {
  readonly ref: ManagedObjectReference;
  name: string;
  template: boolean;
  hasAddress: boolean;
}

export class ToolsPlayer {
  private readonly vms = new Map<string, Guest>();
  private readonly playing = new Set<string>();
  private played = 0;

  private constructor(
    private readonly client: VsphereClient,
    private readonly watch: PropertyWatch,
    private readonly view: ManagedObjectReference,
    private readonly prefix: string,
  ) {}

  static async start(client: VsphereClient, prefix: string): Promise<ToolsPlayer> {
    const view = await client.properties.createContainerView(client.session.serviceContent.rootFolder, ['VirtualMachine'], true);
    const watch = await PropertyWatch.create(client.session, {
      propSet: [{ type: 'VirtualMachine', pathSet: ['name', 'config.template', 'guest.ipAddress'] }],
      objectSet: [{ obj: view, skip: true, selectSet: [{ type: 'ContainerView', path: 'view' }] }],
    });
    return new ToolsPlayer(client, watch, view, prefix);
  }

  /**
   * Waits up to `waitSeconds` for VMs to appear or change, then gives each VM of the prefix
   * without an address one (a VM still busy with its own task is tried again next round).
   * Resolves to the names of the prefix's VMs, as far as vcsim has shown them.
   */
  async round(waitSeconds: number): Promise<string[]> {
    for (const update of await this.watch.next({ maxWaitSeconds: waitSeconds })) {
      const key = update.obj.value;
      if (update.kind === 'leave') {
        this.vms.delete(key);
        continue;
      }
      const guest = this.vms.get(key) ?? { ref: update.obj, name: '', template: false, hasAddress: false };
      if (update.changes.has('name')) guest.name = update.changes.get('name')?.text ?? '';
      if (update.changes.has('config.template')) guest.template = toBoolean(update.changes.get('config.template')) ?? false;
      if (update.changes.has('guest.ipAddress')) guest.hasAddress = update.changes.get('guest.ipAddress') !== undefined;
      this.vms.set(key, guest);
    }
    const mine = [...this.vms.values()].filter((vm) => !vm.template && vm.name.startsWith(this.prefix));
    for (const vm of mine) if (!vm.hasAddress) this.play(vm);
    return mine.map((vm) => vm.name);
  }

  async close(): Promise<void> {
    await this.watch.close();
    await this.client.properties.destroyView(this.view);
  }

  private play(vm: Guest): void {
    if (this.playing.has(vm.ref.value)) return;
    this.playing.add(vm.ref.value);
    this.played += 1;
    const ip = `10.40.${Math.floor(this.played / 250) % 250}.${(this.played % 250) + 1}`;
    void this.client.vms
      .reconfigure(vm.ref, { extraConfig: { 'SET.guest.ipAddress': ip } })
      // Played: not again before the watch shows the address (another would change it).
      .then(() => void (vm.hasAddress = true))
      .catch(() => undefined)
      .finally(() => this.playing.delete(vm.ref.value));
  }
}
