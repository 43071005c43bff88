// What a PVE cluster offers, read for the Provider's failure domains
// (upstream-backends §2.2): the version, the cluster's name and its nodes, and
// for each online node its storages and bridges. Five calls plus two per
// online node. A node that is offline (or goes away while it is read) is left
// out: its failure domain drops from the Provider and nothing is placed there.
import { BackendError, BackendErrorKind } from '../backend-error.js';
import type { ProxmoxClient } from './client/proxmox-client.js';
import { isProxmoxError } from './client/proxmox-error.js';
import type { NodeInventory } from './mapping.js';

export async function discoverNodes(client: ProxmoxClient): Promise<NodeInventory[]> {
  const { version } = await client.cluster.version();
  const status = await client.cluster.status();
  const nodes = await client.cluster.nodes();
  // A standalone node has no cluster entry: its cluster is itself.
  const clusterName = status.find((s) => s.type === 'cluster')?.name;
  const online = nodes.filter((n) => n.status === 'online').sort((a, b) => a.node.localeCompare(b.node));
  if (online.length === 0) {
    throw new BackendError(
      BackendErrorKind.Unreachable,
      `no node of ${clusterName ? `cluster ${clusterName}` : 'the cluster'} is online (${nodes.map((n) => `${n.node}: ${n.status}`).join(', ')})`,
    );
  }
  const read = await Promise.all(
    online.map(async (entry): Promise<NodeInventory | undefined> => {
      try {
        const [storages, bridges] = await Promise.all([client.storage.list(entry.node), client.storage.networks(entry.node, 'any_bridge')]);
        return {
          node: entry.node,
          clusterName: clusterName ?? entry.node,
          version,
          ...(entry.maxcpu !== undefined ? { cpus: entry.maxcpu } : {}),
          ...(entry.maxmem !== undefined ? { memoryBytes: entry.maxmem } : {}),
          ...(entry.maxmem !== undefined && entry.mem !== undefined ? { memoryFreeBytes: entry.maxmem - entry.mem } : {}),
          storages: storages.map((s) => ({
            storage: s.storage,
            content: s.content.split(',').filter((c) => c !== ''),
            usable: s.enabled !== false && s.active !== false,
            shared: s.shared === true,
            ...(s.avail !== undefined ? { availBytes: s.avail } : {}),
          })),
          bridges: bridges.map((b) => ({ iface: b.iface, vlanAware: b.bridge_vlan_aware === true })),
        };
      } catch (err) {
        // Gone offline since /nodes said it was online (pveproxy's 595): it drops out this time.
        if (isProxmoxError(err) && err.status === 595) return undefined;
        throw err;
      }
    }),
  );
  return read.filter((n): n is NodeInventory => n !== undefined);
}
