// What a libvirt host offers, read for its Provider's one failure domain
// (upstream-backends §3.2): its hostname and capacity, its active storage pools
// with their free space, its active networks. A handful of calls per
// discovery: hostname, node info, free memory, the pool and network lists and
// one info read per active pool.
import { StoragePoolState } from './client/constants.js';
import type { LibvirtClient } from './client/libvirt-client.js';
import { ErrorCode, isLibvirtError } from './client/libvirt-error.js';
import type { HostInventory } from './mapping.js';

/** virConnectListAllStoragePoolsFlags / virConnectListAllNetworksFlags ACTIVE. */
const ACTIVE = 2;

export async function discoverHost(client: LibvirtClient): Promise<HostInventory> {
  const [hostname, node, freeMemoryBytes, pools, networks] = await Promise.all([
    client.host.hostname(),
    client.host.nodeInfo(),
    client.host.freeMemoryBytes(),
    client.pools.list(ACTIVE),
    activeNetworks(client),
  ]);
  const infos = await Promise.all(pools.map(async (pool) => ({ name: pool.name, info: await client.pools.info(pool) })));
  return {
    hostname,
    cpus: node.cpus,
    memoryBytes: node.memoryKiB * 1024,
    freeMemoryBytes,
    // Listed as active a moment ago; a pool stopping meanwhile is not offered.
    pools: infos
      .filter(({ info }) => info.state === StoragePoolState.Running)
      .map(({ name, info }) => ({ name, availableBytes: info.availableBytes, capacityBytes: info.capacityBytes })),
    networks: networks.map((n) => n.name),
  };
}

/** A host without libvirt's network driver (NICs on host bridges only) has no libvirt networks: none, not a failure. */
async function activeNetworks(client: LibvirtClient): Promise<{ readonly name: string }[]> {
  try {
    return await client.networks.list(ACTIVE);
  } catch (err) {
    if (isLibvirtError(err, ErrorCode.NO_SUPPORT)) return [];
    throw err;
  }
}
