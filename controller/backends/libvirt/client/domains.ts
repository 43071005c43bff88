// Domains: find (by UUID first: it is the VM's identity), define, power,
// undefine, and read state, XML and guest addresses.
import { fromDomain, toDomain, uuidToBytes, type Domain } from './handles.js';
import type { RpcCaller } from './rpc-caller.js';
import { MetadataType } from './constants.js';
import { Procedures } from './procedures.js';

export interface DomainInfo {
  /** virDomainState: see `DomainState` in constants.ts. */
  readonly state: number;
  readonly maxMemoryKiB: number;
  readonly memoryKiB: number;
  readonly vcpus: number;
  readonly cpuTimeNs: bigint;
}

export interface DomainStateReason {
  /** virDomainState. */
  readonly state: number;
  /** Why, per state (e.g. for Shutoff: 1 shut down, 2 destroyed, 3 crashed…). */
  readonly reason: number;
}

export interface InterfaceAddresses {
  /** The interface's name as the source knows it (`vnet0`, `eth0`). */
  readonly name: string;
  readonly mac: string | undefined;
  readonly addresses: readonly { readonly type: 'ipv4' | 'ipv6'; readonly address: string; readonly prefix: number }[];
}

export class Domains {
  constructor(private readonly rpc: RpcCaller) {}

  /** All domains; `flags` filters (ListDomainsFlags, combinable; 0: all). */
  async list(flags = 0): Promise<Domain[]> {
    const { domains } = await this.rpc.call(Procedures.connectListAllDomains, { need_results: 1, flags });
    return domains.map(toDomain);
  }

  /** Throws NotFound (VIR_ERR_NO_DOMAIN) when there is none. */
  async lookupByUuid(uuid: string): Promise<Domain> {
    return toDomain((await this.rpc.call(Procedures.domainLookupByUuid, { uuid: uuidToBytes(uuid) })).dom);
  }

  /** Throws NotFound (VIR_ERR_NO_DOMAIN) when there is none. */
  async lookupByName(name: string): Promise<Domain> {
    return toDomain((await this.rpc.call(Procedures.domainLookupByName, { name })).dom);
  }

  /** Defines (or redefines, same name and UUID) a persistent domain. `flags`: DefineFlags. */
  async define(xml: string, flags = 0): Promise<Domain> {
    return toDomain((await this.rpc.call(Procedures.domainDefineXmlFlags, { xml, flags })).dom);
  }

  /** Starts a defined domain; resolves to it with its running id. `flags`: CreateFlags. */
  async start(domain: Domain, flags = 0): Promise<Domain> {
    return toDomain((await this.rpc.call(Procedures.domainCreateWithFlags, { dom: fromDomain(domain), flags })).dom);
  }

  /** Asks the guest to shut down (ACPI, agent…): returns at once; the domain stops when the guest does. `flags`: ShutdownFlags. */
  async shutdown(domain: Domain, flags = 0): Promise<void> {
    await this.rpc.call(Procedures.domainShutdownFlags, { dom: fromDomain(domain), flags });
  }

  /** Stops the domain now (power cut). `flags`: DestroyFlags. */
  async destroy(domain: Domain, flags = 0): Promise<void> {
    await this.rpc.call(Procedures.domainDestroyFlags, { dom: fromDomain(domain), flags });
  }

  /** Removes the definition. `flags`: UndefineFlags (which the driver must support). */
  async undefine(domain: Domain, flags = 0): Promise<void> {
    await this.rpc.call(Procedures.domainUndefineFlags, { dom: fromDomain(domain), flags });
  }

  async reboot(domain: Domain, flags = 0): Promise<void> {
    await this.rpc.call(Procedures.domainReboot, { dom: fromDomain(domain), flags });
  }

  /** Pauses the vCPUs (state Paused); memory stays allocated. */
  async suspend(domain: Domain): Promise<void> {
    await this.rpc.call(Procedures.domainSuspend, { dom: fromDomain(domain) });
  }

  async resume(domain: Domain): Promise<void> {
    await this.rpc.call(Procedures.domainResume, { dom: fromDomain(domain) });
  }

  /** Saves memory to disk and stops the domain; the next start restores it. */
  async managedSave(domain: Domain): Promise<void> {
    await this.rpc.call(Procedures.domainManagedSave, { dom: fromDomain(domain), flags: 0 });
  }

  async hasManagedSaveImage(domain: Domain): Promise<boolean> {
    return (await this.rpc.call(Procedures.domainHasManagedSaveImage, { dom: fromDomain(domain), flags: 0 })).result === 1;
  }

  async managedSaveRemove(domain: Domain): Promise<void> {
    await this.rpc.call(Procedures.domainManagedSaveRemove, { dom: fromDomain(domain), flags: 0 });
  }

  async state(domain: Domain): Promise<DomainStateReason> {
    return this.rpc.call(Procedures.domainGetState, { dom: fromDomain(domain), flags: 0 });
  }

  async info(domain: Domain): Promise<DomainInfo> {
    const info = await this.rpc.call(Procedures.domainGetInfo, { dom: fromDomain(domain) });
    return { state: info.state, maxMemoryKiB: Number(info.maxMem), memoryKiB: Number(info.memory), vcpus: info.nrVirtCpu, cpuTimeNs: info.cpuTime };
  }

  /** The domain's XML. `flags`: XmlFlags (Inactive: the persistent definition rather than the running one). */
  async xmlDesc(domain: Domain, flags = 0): Promise<string> {
    return (await this.rpc.call(Procedures.domainGetXmlDesc, { dom: fromDomain(domain), flags })).xml;
  }

  /**
   * Replaces the `<metadata>` element of namespace `uri` (written with prefix `key`) by `xml`, one
   * element whose own namespace libvirt sets; undefined `xml` removes it. `flags`: AffectFlags.
   */
  async setMetadataElement(
    domain: Domain,
    element: { readonly uri: string; readonly key: string; readonly xml: string | undefined },
    flags: number,
  ): Promise<void> {
    const { uri, key, xml } = element;
    await this.rpc.call(Procedures.domainSetMetadata, { dom: fromDomain(domain), type: MetadataType.Element, metadata: xml, key, uri, flags });
  }

  /** Sets memory in KiB. `flags`: AffectFlags, plus MAXIMUM_FLAG for the maximum. */
  async setMemory(domain: Domain, memoryKiB: number, flags: number): Promise<void> {
    await this.rpc.call(Procedures.domainSetMemoryFlags, { dom: fromDomain(domain), memory: BigInt(memoryKiB), flags });
  }

  /** Sets the vCPU count. `flags`: AffectFlags, plus MAXIMUM_FLAG for the maximum. */
  async setVcpus(domain: Domain, vcpus: number, flags: number): Promise<void> {
    await this.rpc.call(Procedures.domainSetVcpusFlags, { dom: fromDomain(domain), nvcpus: vcpus, flags });
  }

  /** Changes a device (e.g. ejects a CD-ROM). `flags`: AffectFlags. */
  async updateDevice(domain: Domain, deviceXml: string, flags: number): Promise<void> {
    await this.rpc.call(Procedures.domainUpdateDeviceFlags, { dom: fromDomain(domain), xml: deviceXml, flags });
  }

  async setAutostart(domain: Domain, autostart: boolean): Promise<void> {
    await this.rpc.call(Procedures.domainSetAutostart, { dom: fromDomain(domain), autostart: autostart ? 1 : 0 });
  }

  /** The guest's addresses as `source` knows them (AddressSource: Lease, Agent, Arp). */
  async interfaceAddresses(domain: Domain, source: number): Promise<InterfaceAddresses[]> {
    const { ifaces } = await this.rpc.call(Procedures.domainInterfaceAddresses, { dom: fromDomain(domain), source, flags: 0 });
    return ifaces.map((iface) => ({
      name: iface.name,
      mac: iface.hwaddr,
      addresses: iface.addrs.map((a) => ({ type: a.type === 1 ? ('ipv6' as const) : ('ipv4' as const), address: a.addr, prefix: a.prefix })),
    }));
  }
}
