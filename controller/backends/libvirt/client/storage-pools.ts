// Storage pools: listed for discovery (capacity, free space), looked up by
// name, refreshed after volumes change behind libvirt's back.
import { fromNamed, toNamed, type StorageVol, type StoragePool } from './handles.js';
import type { RpcCaller } from './rpc-caller.js';
import { Procedures } from './procedures.js';

export interface StoragePoolInfo {
  /** virStoragePoolState: see `StoragePoolState` in constants.ts. */
  readonly state: number;
  readonly capacityBytes: number;
  readonly allocationBytes: number;
  readonly availableBytes: number;
}

export class StoragePools {
  constructor(private readonly rpc: RpcCaller) {}

  /** All pools; `flags` filters (virConnectListAllStoragePoolsFlags: 1 inactive, 2 active…). */
  async list(flags = 0): Promise<StoragePool[]> {
    const { pools } = await this.rpc.call(Procedures.connectListAllStoragePools, { need_results: 1, flags });
    return pools.map(toNamed);
  }

  /** Creates and starts a transient pool (gone when destroyed or the daemon restarts). */
  async createTransient(xml: string): Promise<StoragePool> {
    return toNamed((await this.rpc.call(Procedures.storagePoolCreateXml, { xml, flags: 0 })).pool);
  }

  /** Stops a pool (a transient one is then gone); its volumes stay on disk. */
  async destroy(pool: StoragePool): Promise<void> {
    await this.rpc.call(Procedures.storagePoolDestroy, { pool: fromNamed(pool) });
  }

  /** Throws NotFound (VIR_ERR_NO_STORAGE_POOL) when there is none. */
  async lookupByName(name: string): Promise<StoragePool> {
    return toNamed((await this.rpc.call(Procedures.storagePoolLookupByName, { name })).pool);
  }

  async info(pool: StoragePool): Promise<StoragePoolInfo> {
    const info = await this.rpc.call(Procedures.storagePoolGetInfo, { pool: fromNamed(pool) });
    return { state: info.state, capacityBytes: Number(info.capacity), allocationBytes: Number(info.allocation), availableBytes: Number(info.available) };
  }

  async refresh(pool: StoragePool): Promise<void> {
    await this.rpc.call(Procedures.storagePoolRefresh, { pool: fromNamed(pool), flags: 0 });
  }

  async xmlDesc(pool: StoragePool, flags = 0): Promise<string> {
    return (await this.rpc.call(Procedures.storagePoolGetXmlDesc, { pool: fromNamed(pool), flags })).xml;
  }

  async listVolumes(pool: StoragePool): Promise<StorageVol[]> {
    return (await this.rpc.call(Procedures.storagePoolListAllVolumes, { pool: fromNamed(pool), need_results: 1, flags: 0 })).vols;
  }
}
