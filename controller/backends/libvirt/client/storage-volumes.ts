// Storage volumes: create (blank or as a clone), find, inspect, delete, and
// move bytes in and out through streams (the seed ISO, an image import).
import { currentSignal } from '../../cancellation.js';
import { fromNamed, type StoragePool, type StorageVol } from './handles.js';
import type { RpcCaller } from './rpc-caller.js';
import { Procedures } from './procedures.js';
import { downloadStream, uploadStream } from './volume-stream.js';

export interface StorageVolInfo {
  /** virStorageVolType: see `StorageVolType` in constants.ts. */
  readonly type: number;
  readonly capacityBytes: number;
  readonly allocationBytes: number;
}

export interface RangeOptions {
  /** Where to start, in bytes. @default 0 */
  readonly offset?: number;
  /** How many bytes; 0 means to the end. @default 0 */
  readonly length?: number;
}

export class StorageVolumes {
  constructor(private readonly rpc: RpcCaller) {}

  /** Creates a volume from its XML. `flags`: VolCreateFlags. Throws Rejected (VIR_ERR_STORAGE_VOL_EXIST) for a taken name. */
  async create(pool: StoragePool, xml: string, flags = 0): Promise<StorageVol> {
    return (await this.rpc.call(Procedures.storageVolCreateXml, { pool: fromNamed(pool), xml, flags })).vol;
  }

  /** Creates a volume as a copy of `source` (possibly in another pool of the same host). */
  async createFrom(pool: StoragePool, xml: string, source: StorageVol, flags = 0): Promise<StorageVol> {
    return (await this.rpc.call(Procedures.storageVolCreateXmlFrom, { pool: fromNamed(pool), xml, clonevol: source, flags })).vol;
  }

  /** Throws NotFound (VIR_ERR_NO_STORAGE_VOL) when there is none. */
  async lookupByName(pool: StoragePool, name: string): Promise<StorageVol> {
    return (await this.rpc.call(Procedures.storageVolLookupByName, { pool: fromNamed(pool), name })).vol;
  }

  /** The volume's path on the host (what a domain's `<disk><source file=…>` names). */
  async path(vol: StorageVol): Promise<string> {
    return (await this.rpc.call(Procedures.storageVolGetPath, { vol })).name;
  }

  async info(vol: StorageVol): Promise<StorageVolInfo> {
    const info = await this.rpc.call(Procedures.storageVolGetInfo, { vol });
    return { type: info.type, capacityBytes: Number(info.capacity), allocationBytes: Number(info.allocation) };
  }

  async xmlDesc(vol: StorageVol): Promise<string> {
    return (await this.rpc.call(Procedures.storageVolGetXmlDesc, { vol, flags: 0 })).xml;
  }

  async delete(vol: StorageVol): Promise<void> {
    await this.rpc.call(Procedures.storageVolDelete, { vol, flags: 0 });
  }

  /**
   * Writes `data` into the volume from `offset` (a stream; chunks as they
   * come, with backpressure). Drivers without streams (the test driver)
   * throw Rejected (VIR_ERR_NO_SUPPORT).
   */
  async upload(vol: StorageVol, data: Uint8Array | AsyncIterable<Uint8Array>, range: RangeOptions = {}): Promise<void> {
    const connection = await this.rpc.connection();
    const args = { vol, offset: BigInt(range.offset ?? 0), length: BigInt(range.length ?? 0), flags: 0 };
    await uploadStream({ connection, procedure: Procedures.storageVolUpload, args, signal: currentSignal() }, data);
  }

  /** Reads the volume (or a range of it) into memory: for small volumes (a seed ISO). */
  async download(vol: StorageVol, range: RangeOptions = {}): Promise<Buffer> {
    const connection = await this.rpc.connection();
    const args = { vol, offset: BigInt(range.offset ?? 0), length: BigInt(range.length ?? 0), flags: 0 };
    return downloadStream({ connection, procedure: Procedures.storageVolDownload, args, signal: currentSignal() });
  }
}
