// The vim25 data we read, as small typed shapes. Wire names are kept (uuid,
// powerState); only what banlieue uses is modelled.
import type { XmlElement } from './xml-element.js';

/** A managed object reference: `<obj type="VirtualMachine">vm-42</obj>`. */
export interface ManagedObjectReference {
  readonly type: string;
  readonly value: string;
}

/** ServiceContent.about, the parts that identify the server. */
export interface AboutInfo {
  readonly fullName: string;
  readonly apiType: string;
  readonly apiVersion: string;
  readonly instanceUuid: string | undefined;
}

/** The singletons from RetrieveServiceContent that the client calls. */
export interface ServiceContent {
  readonly about: AboutInfo;
  readonly rootFolder: ManagedObjectReference;
  readonly propertyCollector: ManagedObjectReference;
  readonly viewManager: ManagedObjectReference;
  readonly sessionManager: ManagedObjectReference;
  readonly searchIndex: ManagedObjectReference;
}

export type VirtualMachinePowerState = 'poweredOn' | 'poweredOff' | 'suspended';

/** One guest NIC as VMware Tools reports it (`guest.net[]`). */
export interface GuestNic {
  readonly macAddress: string | undefined;
  /** Port group name. */
  readonly network: string | undefined;
  readonly ipAddresses: readonly string[];
  readonly connected: boolean;
  /** The virtual device key this NIC belongs to. */
  readonly deviceConfigId: number | undefined;
}

/** What the provider reads of a VM. Absent properties (no config, no Tools) are undefined. */
export interface VmSummary {
  readonly ref: ManagedObjectReference;
  readonly name: string;
  /** BIOS UUID, `config.uuid`: banlieue's VM identity (DESIGN §3). */
  readonly uuid: string | undefined;
  readonly instanceUuid: string | undefined;
  readonly template: boolean;
  readonly powerState: VirtualMachinePowerState;
  /** When the VM was last powered on (`summary.runtime.bootTime`); absent while it is off. */
  readonly bootTime?: string;
  /** Primary guest IP (`guest.ipAddress`). */
  readonly ipAddress: string | undefined;
  readonly guestNics: readonly GuestNic[];
}

/** Where a virtual NIC is plugged. */
export type NicBacking =
  | {
      /** A standard port group: `VirtualEthernetCardNetworkBackingInfo`. */
      readonly kind: 'network';
      readonly deviceName: string;
      readonly network: ManagedObjectReference | undefined;
    }
  | {
      /** A distributed port group: `VirtualEthernetCardDistributedVirtualPortBackingInfo`. */
      readonly kind: 'distributed';
      readonly switchUuid: string;
      readonly portgroupKey: string;
    }
  | { readonly kind: 'other'; readonly backingType: string | undefined };

/** A VM's virtual NIC (`config.hardware.device[]` of a VirtualEthernetCard subtype). */
export interface EthernetCard {
  readonly key: number;
  /** Concrete device type, e.g. `VirtualVmxnet3`, `VirtualE1000`. */
  readonly deviceType: string;
  readonly label: string | undefined;
  readonly macAddress: string | undefined;
  readonly backing: NicBacking;
  /** The device as read, sent back whole (with a new backing) by an edit. */
  readonly wire: XmlElement;
}

/** A virtual disk (`config.hardware.device[]` of type VirtualDisk). */
export interface VirtualDiskInfo {
  readonly key: number;
  readonly controllerKey: number;
  readonly unitNumber: number | undefined;
  readonly capacityKB: number;
  readonly label: string | undefined;
  /** backing.datastore */
  readonly datastore: ManagedObjectReference | undefined;
  /** backing.fileName, e.g. "[LocalDS_0] vm/vm.vmdk" */
  readonly fileName: string | undefined;
  /** The device as read, sent back whole (with a new capacity) by a grow. */
  readonly wire: XmlElement;
}

/** A controller disks attach to (ParaVirtualSCSIController, VirtualLsiLogicController, ..., VirtualNVMEController, VirtualAHCIController). */
export interface DiskControllerInfo {
  readonly key: number;
  /** Concrete controller type, e.g. `ParaVirtualSCSIController`. */
  readonly deviceType: string;
  readonly busNumber: number;
  /** Keys of the devices attached: the controller's own `device` list, as read. */
  readonly deviceKeys: readonly number[];
  /**
   * unitNumbers taken on this controller by any device (disks, CD-ROMs…), from
   * the devices' own controllerKey/unitNumber: the `device` list holds keys, not
   * units, and vcsim leaves it stale. toDiskControllers always sets it.
   * @default none beyond the disks passed to nextFreeUnits
   */
  readonly unitsInUse?: readonly number[];
}

/** A VM's virtual hardware, as one read (VirtualMachines.hardware). */
export interface VmHardware {
  readonly numCPUs: number | undefined;
  readonly memoryMB: number | undefined;
  /** config.firmware: 'bios' | 'efi' */
  readonly firmware: string | undefined;
  readonly cards: readonly EthernetCard[];
  readonly disks: readonly VirtualDiskInfo[];
  readonly diskControllers: readonly DiskControllerInfo[];
}

export type TaskState = 'queued' | 'running' | 'success' | 'error';
