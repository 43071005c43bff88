// Cluster-wide reads: version, nodes, cluster status and resources, the next free VMID.
import type { Static } from '@sinclair/typebox';
import { Endpoints, type ResourceFilter } from './endpoints.js';
import type { ProxmoxTransport } from './transport.js';
import type { ClusterResource, ClusterStatusEntry, NodeEntry, NodeStatus, VersionInfo } from './wire-types.js';

export class Cluster {
  constructor(private readonly transport: ProxmoxTransport) {}

  version(): Promise<VersionInfo> {
    return this.transport.call(Endpoints.version, {});
  }

  /** Every cluster node with `status` online/offline/unknown. */
  nodes(): Promise<NodeEntry[]> {
    return this.transport.call(Endpoints.nodes, {});
  }

  /** One node's CPU, memory and version; answered by that node (fails while it is offline). */
  nodeStatus(node: string): Promise<NodeStatus> {
    return this.transport.call(Endpoints.nodeStatus, { node });
  }

  /** The cluster entry (name, quorate) and one entry per node (online, local). */
  status(): Promise<ClusterStatusEntry[]> {
    return this.transport.call(Endpoints.clusterStatus, {});
  }

  resources(type?: Static<typeof ResourceFilter>): Promise<ClusterResource[]> {
    return this.transport.call(Endpoints.clusterResources, type === undefined ? {} : { type });
  }

  /**
   * The lowest free VMID, or with `vmid`, that one if it is free (a taken one:
   * ProxmoxError 400 on `vmid`). Free now is not free at clone time: another
   * writer may take it first, and the clone then fails with AlreadyExists.
   */
  nextId(vmid?: number): Promise<number> {
    return this.transport.call(Endpoints.nextId, vmid === undefined ? {} : { vmid });
  }
}
