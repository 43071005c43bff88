// Storages of a node, their contents, and uploads (the cloud-init seed ISO).
import type { Static } from '@sinclair/typebox';
import { Endpoints } from './endpoints.js';
import type { ProxmoxTransport } from './transport.js';
import type { NetworkEntry, StorageEntry, StorageStatus, StorageVolume } from './wire-types.js';

export type StorageListFilter = Omit<Static<typeof Endpoints.storages.params>, 'node'>;
export type UploadParams = Static<typeof Endpoints.upload.params>;
export type NetworkType = NonNullable<Static<typeof Endpoints.networks.params>['type']>;

export class Storage {
  constructor(private readonly transport: ProxmoxTransport) {}

  /** The storages `node` can use, with content types and space (`enabled: true`: only enabled ones). */
  list(node: string, filter: StorageListFilter = {}): Promise<StorageEntry[]> {
    return this.transport.call(Endpoints.storages, { node, ...filter });
  }

  status(node: string, storage: string): Promise<StorageStatus> {
    return this.transport.call(Endpoints.storageStatus, { node, storage });
  }

  content(node: string, storage: string, filter: { content?: string; vmid?: number } = {}): Promise<StorageVolume[]> {
    return this.transport.call(Endpoints.storageContent, { node, storage, ...filter });
  }

  /** Deletes a volume (`storage:iso/x.iso`); a UPID when PVE does it as a task. */
  deleteVolume(node: string, storage: string, volume: string): Promise<string | null> {
    return this.transport.call(Endpoints.deleteVolume, { node, storage, volume });
  }

  /** Uploads `data` as `filename` (e.g. an ISO into `iso` content); answers the UPID of the import task. */
  upload(params: UploadParams, data: Buffer): Promise<string> {
    return this.transport.upload(Endpoints.upload, params, { data });
  }

  /** The node's network interfaces; `type: 'any_bridge'` for every bridge (Linux, OVS, SDN vnet). */
  networks(node: string, type?: NetworkType): Promise<NetworkEntry[]> {
    return this.transport.call(Endpoints.networks, type === undefined ? { node } : { node, type });
  }
}
