// The inventory a Provider discovers: datacenters, clusters, datastores and
// networks (upstream-backends §1.2), each read in one PropertyCollector call.
import type { ObjectContent, PropertyCollector } from './property-collector.js';
import type { ServiceContent, ManagedObjectReference } from './vim-types.js';
import { refKey, toBoolean, toMoRef, toMoRefs, toNumber } from './wire-values.js';

export interface DatacenterInfo {
  readonly ref: ManagedObjectReference;
  readonly name: string;
  readonly vmFolder: ManagedObjectReference;
  readonly hostFolder: ManagedObjectReference;
  readonly datastoreFolder: ManagedObjectReference;
  readonly networkFolder: ManagedObjectReference;
}

export interface ClusterInfo {
  readonly ref: ManagedObjectReference;
  readonly name: string;
  /** The cluster's root resource pool (`Resources`). */
  readonly resourcePool: ManagedObjectReference;
  readonly datastores: readonly ManagedObjectReference[];
  readonly networks: readonly ManagedObjectReference[];
  readonly hosts: readonly ManagedObjectReference[];
}

/** What a host offers VMs: its hardware, the memory in use, and whether it takes VMs at all. */
export interface HostInfo {
  readonly ref: ManagedObjectReference;
  readonly cpuThreads: number;
  readonly memoryBytes: number;
  /** summary.quickStats.overallMemoryUsage, in bytes. */
  readonly memoryUsedBytes: number;
  /** Connected and not in maintenance mode. */
  readonly usable: boolean;
}

export interface DatastoreInfo {
  readonly ref: ManagedObjectReference;
  readonly name: string;
  /** A `StoragePod` parent means the datastore is in an SDRS cluster. */
  readonly parent: ManagedObjectReference | undefined;
  readonly freeSpace: number;
  readonly capacity: number;
  readonly accessible: boolean;
}

export type NetworkInfo =
  | { readonly kind: 'standard' | 'opaque'; readonly ref: ManagedObjectReference; readonly name: string }
  | {
      readonly kind: 'distributed';
      readonly ref: ManagedObjectReference;
      readonly name: string;
      /** DVPortgroup key, for a NIC's port backing. */
      readonly portgroupKey: string;
      /** The switch's UUID, for a NIC's port backing. */
      readonly switchUuid: string;
      /** An uplink port group (connects hosts, not VMs). */
      readonly uplink: boolean;
    };

export class Inventory {
  constructor(
    private readonly serviceContent: ServiceContent,
    private readonly properties: PropertyCollector,
  ) {}

  async datacenters(): Promise<DatacenterInfo[]> {
    const contents = await this.properties.listManagedObjects(this.serviceContent.rootFolder, [
      { type: 'Datacenter', pathSet: ['name', 'vmFolder', 'hostFolder', 'datastoreFolder', 'networkFolder'] },
    ]);
    return contents.map((c) => ({
      ref: c.obj,
      name: name(c),
      vmFolder: moRef(c, 'vmFolder'),
      hostFolder: moRef(c, 'hostFolder'),
      datastoreFolder: moRef(c, 'datastoreFolder'),
      networkFolder: moRef(c, 'networkFolder'),
    }));
  }

  /** Clusters (ClusterComputeResource) under `root`, e.g. a datacenter. */
  async clusters(root: ManagedObjectReference): Promise<ClusterInfo[]> {
    const contents = await this.properties.listManagedObjects(root, [
      { type: 'ClusterComputeResource', pathSet: ['name', 'resourcePool', 'datastore', 'network', 'host'] },
    ]);
    return contents.map((c) => ({
      ref: c.obj,
      name: name(c),
      resourcePool: moRef(c, 'resourcePool'),
      datastores: toMoRefs(c.props.get('datastore')),
      networks: toMoRefs(c.props.get('network')),
      hosts: toMoRefs(c.props.get('host')),
    }));
  }

  /** Hosts (HostSystem) under `root`, e.g. a datacenter, with their capacity. */
  async hosts(root: ManagedObjectReference): Promise<HostInfo[]> {
    const contents = await this.properties.listManagedObjects(root, [
      {
        type: 'HostSystem',
        pathSet: [
          'summary.hardware.numCpuThreads',
          'summary.hardware.memorySize',
          'summary.quickStats.overallMemoryUsage',
          'runtime.connectionState',
          'runtime.inMaintenanceMode',
        ],
      },
    ]);
    return contents.map((c) => ({
      ref: c.obj,
      cpuThreads: toNumber(c.props.get('summary.hardware.numCpuThreads')) ?? 0,
      memoryBytes: toNumber(c.props.get('summary.hardware.memorySize')) ?? 0,
      memoryUsedBytes: (toNumber(c.props.get('summary.quickStats.overallMemoryUsage')) ?? 0) * 1024 ** 2,
      usable: c.props.get('runtime.connectionState')?.text === 'connected' && toBoolean(c.props.get('runtime.inMaintenanceMode')) !== true,
    }));
  }

  async datastores(root: ManagedObjectReference): Promise<DatastoreInfo[]> {
    const contents = await this.properties.listManagedObjects(root, [
      { type: 'Datastore', pathSet: ['name', 'parent', 'summary.freeSpace', 'summary.capacity', 'summary.accessible'] },
    ]);
    return contents.map((c) => {
      const parent = c.props.get('parent');
      return {
        ref: c.obj,
        name: name(c),
        parent: parent === undefined ? undefined : toMoRef(parent),
        freeSpace: toNumber(c.props.get('summary.freeSpace')) ?? 0,
        capacity: toNumber(c.props.get('summary.capacity')) ?? 0,
        accessible: toBoolean(c.props.get('summary.accessible')) ?? false,
      };
    });
  }

  /** Standard, distributed and opaque networks under `root`, with what a NIC backing needs. */
  async networks(root: ManagedObjectReference): Promise<NetworkInfo[]> {
    const contents = await this.properties.listManagedObjects(root, [
      { type: 'Network', pathSet: ['name'] },
      { type: 'OpaqueNetwork', pathSet: ['name'] },
      { type: 'DistributedVirtualPortgroup', pathSet: ['name', 'key', 'config.distributedVirtualSwitch', 'config.uplink'] },
    ]);
    const switchUuids = await this.switchUuids(contents);
    return contents.map((c): NetworkInfo => {
      if (c.obj.type === 'DistributedVirtualPortgroup') {
        const dvs = moRef(c, 'config.distributedVirtualSwitch');
        return {
          kind: 'distributed',
          ref: c.obj,
          name: name(c),
          portgroupKey: c.props.get('key')?.text ?? c.obj.value,
          switchUuid: switchUuids.get(refKey(dvs)) ?? '',
          uplink: toBoolean(c.props.get('config.uplink')) ?? false,
        };
      }
      return { kind: c.obj.type === 'OpaqueNetwork' ? 'opaque' : 'standard', ref: c.obj, name: name(c) };
    });
  }

  /**
   * The inventory path of `entity` as SearchIndex.FindByInventoryPath takes it,
   * e.g. `DC0/vm/templates/ubuntu`: the names from below the root folder down.
   * vCenter keeps `/`, `\` and `%` in names escaped (%2f, %5c, %25), which is
   * what paths need. One call per level.
   */
  async inventoryPath(entity: ManagedObjectReference): Promise<string> {
    const names: string[] = [];
    let current: ManagedObjectReference | undefined = entity;
    while (current !== undefined && current.value !== this.serviceContent.rootFolder.value) {
      const content = await this.properties.retrieveOne(current, ['name', 'parent']);
      names.unshift(name(content));
      const parent = content.props.get('parent');
      current = parent === undefined ? undefined : toMoRef(parent);
    }
    return names.join('/');
  }

  /** `name` of each object, by refKey, in one RetrievePropertiesEx (none for no refs). */
  names(refs: readonly ManagedObjectReference[]): Promise<Map<string, string>> {
    return this.textOf(refs, 'name');
  }

  /** uuid of every switch the port groups name, by the switch's refKey, in one call. */
  private switchUuids(contents: readonly ObjectContent[]): Promise<Map<string, string>> {
    return this.textOf(
      contents.flatMap((c) => {
        const dvs = c.props.get('config.distributedVirtualSwitch');
        return dvs === undefined ? [] : [toMoRef(dvs)];
      }),
      'uuid',
    );
  }

  /** One text property of each object, by refKey: one spec per concrete type (VmwareDistributedVirtualSwitch, …). */
  private async textOf(refs: readonly ManagedObjectReference[], path: string): Promise<Map<string, string>> {
    const unique = [...new Map(refs.map((r) => [refKey(r), r])).values()];
    if (unique.length === 0) return new Map();
    const found = await this.properties.retrieve([
      { propSet: [...new Set(unique.map((r) => r.type))].map((type) => ({ type, pathSet: [path] })), objectSet: unique.map((obj) => ({ obj })) },
    ]);
    return new Map(found.map((c) => [refKey(c.obj), c.props.get(path)?.text ?? '']));
  }
}

function name(content: ObjectContent): string {
  return content.props.get('name')?.text ?? '';
}

function moRef(content: ObjectContent, path: string): ManagedObjectReference {
  const value = content.props.get(path);
  if (value === undefined) throw new Error(`${content.obj.type} ${content.obj.value}: no ${path}`);
  return toMoRef(value);
}
