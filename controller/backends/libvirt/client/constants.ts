// Flag and state values of libvirt's public API (include/libvirt/libvirt-*.h).
// They are not in the `.x` files; each is append-only upstream.

/** virDomainState. */
export const DomainState = {
  NoState: 0,
  Running: 1,
  Blocked: 2,
  Paused: 3,
  ShuttingDown: 4,
  Shutoff: 5,
  Crashed: 6,
  PMSuspended: 7,
} as const;

/** virConnectListAllDomainsFlags (combinable; 0 lists all). */
export const ListDomainsFlags = {
  Active: 1,
  Inactive: 2,
  Persistent: 4,
  Transient: 8,
  Running: 16,
  Paused: 32,
  Shutoff: 64,
  Other: 128,
} as const;

/** virDomainDefineFlags. */
export const DefineFlags = { Validate: 1 } as const;

/** virDomainCreateFlags. */
export const CreateFlags = { Paused: 1, AutoDestroy: 2, BypassCache: 4, ForceBoot: 8, Validate: 16, ResetNvram: 32 } as const;

/** virDomainShutdownFlagValues: 0 lets the hypervisor pick. */
export const ShutdownFlags = { Default: 0, AcpiPowerButton: 1, GuestAgent: 2, Initctl: 4, Signal: 8, Paravirt: 16 } as const;

/** virDomainDestroyFlagsValues. */
export const DestroyFlags = { Default: 0, Graceful: 1 } as const;

/** virDomainUndefineFlagsValues. The test driver refuses Nvram and CheckpointsMetadata. */
export const UndefineFlags = {
  ManagedSave: 1,
  SnapshotsMetadata: 2,
  Nvram: 4,
  KeepNvram: 8,
  CheckpointsMetadata: 16,
  Tpm: 32,
  KeepTpm: 64,
} as const;

/** virDomainModificationImpact, for set-memory/vcpus and device updates. */
export const AffectFlags = { Current: 0, Live: 1, Config: 2 } as const;
/** VIR_DOMAIN_VCPU_MAXIMUM / VIR_DOMAIN_MEM_MAXIMUM: change the maximum, not the current value. */
export const MAXIMUM_FLAG = 4;

/** virDomainMetadataType: the `<description>`, the `<title>`, or one element of `<metadata>`. */
export const MetadataType = { Description: 0, Title: 1, Element: 2 } as const;

/** virDomainXMLFlags. */
export const XmlFlags = { Secure: 1, Inactive: 2, UpdateCpu: 4, Migratable: 8 } as const;

/** virDomainInterfaceAddressesSource. */
export const AddressSource = { Lease: 0, Agent: 1, Arp: 2 } as const;

/** virIPAddrType. */
export const IpAddrType = { IPv4: 0, IPv6: 1 } as const;

/** virDomainEventID: only lifecycle is used. */
export const DomainEventId = { Lifecycle: 0 } as const;

/** virDomainEventType: the `event` of a lifecycle event. */
export const LifecycleEvent = {
  Defined: 0,
  Undefined: 1,
  Started: 2,
  Suspended: 3,
  Resumed: 4,
  Stopped: 5,
  Shutdown: 6,
  PMSuspended: 7,
  Crashed: 8,
} as const;

/** virStoragePoolState. */
export const StoragePoolState = { Inactive: 0, Building: 1, Running: 2, Degraded: 3, Inaccessible: 4 } as const;

/** virStorageVolType. */
export const StorageVolType = { File: 0, Block: 1, Dir: 2, Network: 3, NetDir: 4, Ploop: 5 } as const;

/** virStorageVolCreateFlags. */
export const VolCreateFlags = { PreallocMetadata: 1, Reflink: 2 } as const;
