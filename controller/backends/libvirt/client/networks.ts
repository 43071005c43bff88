// Virtual networks: listed for discovery, looked up by name, and their DHCP
// leases read for guest addresses; transient ones created and destroyed (tests).
import { fromNamed, toNamed, type Network } from './handles.js';
import type { RpcCaller } from './rpc-caller.js';
import { Procedures } from './procedures.js';

export interface DhcpLease {
  /** The network's bridge, e.g. `virbr0`. */
  readonly iface: string;
  /** Seconds since the epoch. */
  readonly expiryTime: number;
  readonly type: 'ipv4' | 'ipv6';
  readonly mac: string | undefined;
  readonly ipAddress: string;
  readonly prefix: number;
  readonly hostname: string | undefined;
  readonly clientId: string | undefined;
}

export class Networks {
  constructor(private readonly rpc: RpcCaller) {}

  /** All networks; `flags` filters (virConnectListAllNetworksFlags: 1 inactive, 2 active…). */
  async list(flags = 0): Promise<Network[]> {
    const { nets } = await this.rpc.call(Procedures.connectListAllNetworks, { need_results: 1, flags });
    return nets.map(toNamed);
  }

  /** Creates and starts a transient network (gone when destroyed or the daemon restarts). */
  async createTransient(xml: string): Promise<Network> {
    return toNamed((await this.rpc.call(Procedures.networkCreateXml, { xml })).net);
  }

  /** Stops a network (a transient one is then gone). */
  async destroy(network: Network): Promise<void> {
    await this.rpc.call(Procedures.networkDestroy, { net: fromNamed(network) });
  }

  /** Throws NotFound (VIR_ERR_NO_NETWORK) when there is none. */
  async lookupByName(name: string): Promise<Network> {
    return toNamed((await this.rpc.call(Procedures.networkLookupByName, { name })).net);
  }

  async xmlDesc(network: Network, flags = 0): Promise<string> {
    return (await this.rpc.call(Procedures.networkGetXmlDesc, { net: fromNamed(network), flags })).xml;
  }

  /** Current leases, of one MAC address when given. The test driver does not support this (Rejected). */
  async dhcpLeases(network: Network, mac?: string): Promise<DhcpLease[]> {
    const { leases } = await this.rpc.call(Procedures.networkGetDhcpLeases, { net: fromNamed(network), mac, need_results: 1, flags: 0 });
    return leases.map((lease) => ({
      iface: lease.iface,
      expiryTime: Number(lease.expirytime),
      type: lease.type === 1 ? 'ipv6' : 'ipv4',
      mac: lease.mac,
      ipAddress: lease.ipaddr,
      prefix: lease.prefix,
      hostname: lease.hostname,
      clientId: lease.clientid,
    }));
  }
}
