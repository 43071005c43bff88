// SearchIndex lookups. A miss is `undefined`, not an error: vim25 answers an
// empty returnval, and "not there yet" is an ordinary state for the provider.
import type { VimInvoker } from './session.js';
import type { ManagedObjectReference } from './vim-types.js';
import { moRefFields, toMoRef } from './wire-values.js';

export class SearchIndex {
  constructor(private readonly vim: VimInvoker) {}

  /**
   * The VM (or template) whose BIOS UUID (`config.uuid`) is `uuid`, optionally
   * only in `datacenter`. This is how a VM is found again after a crash or a
   * move (DESIGN §3): FindByUuid with vmSearch=true, instanceUuid=false.
   */
  async findVmByBiosUuid(uuid: string, datacenter?: ManagedObjectReference): Promise<ManagedObjectReference | undefined> {
    const response = await this.vim.invoke('FindByUuid', this.vim.serviceContent.searchIndex, {
      datacenter: datacenter === undefined ? undefined : moRefFields(datacenter),
      uuid,
      vmSearch: true,
      instanceUuid: false,
    });
    const found = response.child('returnval');
    return found === undefined ? undefined : toMoRef(found);
  }

  /** The entity at an inventory path such as `DC0/vm/folder/name` (no leading slash needed). */
  async findByInventoryPath(inventoryPath: string): Promise<ManagedObjectReference | undefined> {
    const response = await this.vim.invoke('FindByInventoryPath', this.vim.serviceContent.searchIndex, { inventoryPath });
    const found = response.child('returnval');
    return found === undefined ? undefined : toMoRef(found);
  }
}
