// What banlieue reads from PVE answers: the fields it uses, with the names and
// types of the PVE API schema (pve-docs apidata, PVE 9.1). Hand-written for
// the subset on purpose: the schema is AGPL-licensed and stays out of the
// repository; test/unit/backends/proxmox/schema.test.ts checks every field
// here against it (name, type, and optional where PVE may leave it out).
//
// Decoding converts before checking (TypeBox Value.Convert), because PVE's
// JSON is loose where its schema is not: booleans come as 1/0 and some
// integers as strings (`/cluster/nextid`).
import { Type, type Static, type TOptional, type TString } from '@sinclair/typebox';

/** Optional field. */
const opt = Type.Optional;

/**
 * `prefix0` … `prefix<count-1>`, optional strings: PVE's `net[n]`, `scsi[n]`…,
 * exactly the ones PVE accepts (qemu-server's MAX_NETS, MAX_SCSI_DISKS…).
 * TypeBox's static types drop such keys: IndexedConfigKeys types them.
 */
export function indexed(prefix: keyof typeof IndexedKeyCount, count: number): Record<string, TOptional<TString>> {
  return Object.fromEntries(Array.from({ length: count }, (_, i) => [`${prefix}${i}`, Type.Optional(Type.String())]));
}

/** How many of each indexed VM config key PVE has (qemu-server PVE/QemuServer*.pm). */
export const IndexedKeyCount = { net: 32, ipconfig: 32, scsi: 31, ide: 4, sata: 6, virtio: 16, unused: 256 } as const;

/** `net0`, `scsi1`, `ipconfig0`…: the indexed config keys, as property strings. */
export type IndexedConfigKeys = Partial<Record<`${keyof typeof IndexedKeyCount}${number}`, string>>;

export const VersionInfo = Type.Object({ version: Type.String(), release: Type.String(), repoid: Type.String() });
export type VersionInfo = Static<typeof VersionInfo>;

export const NodeState = Type.Union([Type.Literal('unknown'), Type.Literal('online'), Type.Literal('offline')]);

export const NodeEntry = Type.Object({
  node: Type.String(),
  status: NodeState,
  cpu: opt(Type.Number()),
  maxcpu: opt(Type.Integer()),
  mem: opt(Type.Integer()),
  maxmem: opt(Type.Integer()),
  uptime: opt(Type.Integer()),
});
export type NodeEntry = Static<typeof NodeEntry>;

export const NodeStatus = Type.Object({
  cpu: Type.Number(),
  pveversion: Type.String(),
  memory: Type.Object({ total: Type.Integer(), used: Type.Integer(), free: Type.Integer() }),
  cpuinfo: Type.Object({ cpus: Type.Integer(), cores: Type.Integer(), sockets: Type.Integer(), model: Type.String() }),
});
export type NodeStatus = Static<typeof NodeStatus>;

export const ClusterStatusEntry = Type.Object({
  type: Type.Union([Type.Literal('cluster'), Type.Literal('node')]),
  id: Type.String(),
  name: Type.String(),
  online: opt(Type.Boolean()),
  local: opt(Type.Boolean()),
  nodeid: opt(Type.Integer()),
  ip: opt(Type.String()),
  quorate: opt(Type.Boolean()),
  nodes: opt(Type.Integer()),
});
export type ClusterStatusEntry = Static<typeof ClusterStatusEntry>;

export const ClusterResourceType = Type.Union([
  Type.Literal('node'),
  Type.Literal('storage'),
  Type.Literal('pool'),
  Type.Literal('qemu'),
  Type.Literal('lxc'),
  Type.Literal('openvz'),
  Type.Literal('sdn'),
  Type.Literal('network'),
]);

export const ClusterResource = Type.Object({
  id: Type.String(),
  type: ClusterResourceType,
  node: opt(Type.String()),
  status: opt(Type.String()),
  vmid: opt(Type.Integer()),
  name: opt(Type.String()),
  tags: opt(Type.String()),
  template: opt(Type.Boolean()),
  lock: opt(Type.String()),
  pool: opt(Type.String()),
  storage: opt(Type.String()),
  shared: opt(Type.Boolean()),
  content: opt(Type.String()),
  maxcpu: opt(Type.Number()),
  maxmem: opt(Type.Integer()),
  mem: opt(Type.Integer()),
  maxdisk: opt(Type.Integer()),
  disk: opt(Type.Integer()),
});
export type ClusterResource = Static<typeof ClusterResource>;

export const StorageStatus = Type.Object({
  type: Type.String(),
  /** Comma-separated content types: `images,iso,snippets,…`. */
  content: Type.String(),
  active: opt(Type.Boolean()),
  enabled: opt(Type.Boolean()),
  shared: opt(Type.Boolean()),
  total: opt(Type.Integer()),
  used: opt(Type.Integer()),
  avail: opt(Type.Integer()),
});
export type StorageStatus = Static<typeof StorageStatus>;

export const StorageEntry = Type.Composite([Type.Object({ storage: Type.String() }), StorageStatus]);
export type StorageEntry = Static<typeof StorageEntry>;

export const StorageVolume = Type.Object({
  volid: Type.String(),
  format: Type.String(),
  size: Type.Integer(),
  vmid: opt(Type.Integer()),
  ctime: opt(Type.Integer()),
  notes: opt(Type.String()),
});
export type StorageVolume = Static<typeof StorageVolume>;

export const NetworkEntry = Type.Object({
  iface: Type.String(),
  type: Type.String(),
  active: opt(Type.Boolean()),
  autostart: opt(Type.Boolean()),
  bridge_ports: opt(Type.String()),
  bridge_vlan_aware: opt(Type.Boolean()),
  cidr: opt(Type.String()),
  comments: opt(Type.String()),
});
export type NetworkEntry = Static<typeof NetworkEntry>;

export const VmState = Type.Union([Type.Literal('stopped'), Type.Literal('running')]);

export const QemuEntry = Type.Object({
  vmid: Type.Integer(),
  status: VmState,
  name: opt(Type.String()),
  tags: opt(Type.String()),
  template: opt(Type.Boolean()),
  lock: opt(Type.String()),
  cpus: opt(Type.Number()),
  maxmem: opt(Type.Integer()),
  uptime: opt(Type.Integer()),
});
export type QemuEntry = Static<typeof QemuEntry>;

export const QemuStatus = Type.Object({
  vmid: Type.Integer(),
  status: VmState,
  /** QMP's view: `running`, `paused`, `prelaunch`, `suspended`…; only while the process exists. */
  qmpstatus: opt(Type.String()),
  name: opt(Type.String()),
  tags: opt(Type.String()),
  lock: opt(Type.String()),
  template: opt(Type.Boolean()),
  /** The guest agent is enabled in the config (not that it answers). */
  agent: opt(Type.Boolean()),
  uptime: opt(Type.Integer()),
  pid: opt(Type.Integer()),
});
export type QemuStatus = Static<typeof QemuStatus>;

/** The VM config keys banlieue reads or writes (GET answers them; POST/PUT take them). */
const qemuConfigKeys = {
  name: opt(Type.String()),
  description: opt(Type.String()),
  tags: opt(Type.String()),
  smbios1: opt(Type.String()),
  cores: opt(Type.Integer()),
  sockets: opt(Type.Integer()),
  memory: opt(Type.String()),
  cpu: opt(Type.String()),
  bios: opt(Type.String()),
  agent: opt(Type.String()),
  onboot: opt(Type.Boolean()),
  scsihw: opt(Type.String()),
  boot: opt(Type.String()),
  efidisk0: opt(Type.String()),
  tpmstate0: opt(Type.String()),
  ciuser: opt(Type.String()),
  cipassword: opt(Type.String()),
  citype: opt(Type.String()),
  cicustom: opt(Type.String()),
  sshkeys: opt(Type.String()),
  nameserver: opt(Type.String()),
  searchdomain: opt(Type.String()),
  ...indexed('net', IndexedKeyCount.net),
  ...indexed('ipconfig', IndexedKeyCount.ipconfig),
  ...indexed('scsi', IndexedKeyCount.scsi),
  ...indexed('ide', IndexedKeyCount.ide),
  ...indexed('sata', IndexedKeyCount.sata),
  ...indexed('virtio', IndexedKeyCount.virtio),
};

/** The settable keys, for the config POST/PUT parameters. */
export const QemuConfigKeys = qemuConfigKeys;

export const QemuConfig = Type.Object({
  ...qemuConfigKeys,
  /** SHA1 of the config file; sent back as `digest` to refuse a concurrent change. */
  digest: Type.String(),
  template: opt(Type.Boolean()),
  lock: opt(Type.String()),
  ...indexed('unused', IndexedKeyCount.unused),
});
export type QemuConfig = Static<typeof QemuConfig> & IndexedConfigKeys;

export const TaskStatus = Type.Object({
  upid: Type.String(),
  node: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('stopped')]),
  /** `OK`, `WARNINGS: <n>`, or the error text; only once stopped. */
  exitstatus: opt(Type.String()),
  type: Type.String(),
  id: Type.String(),
  user: Type.String(),
  starttime: Type.Integer(),
});
export type TaskStatus = Static<typeof TaskStatus>;

/** One line of a task's log: its number (from 1) and text. */
export const TaskLogLine = Type.Object({ n: Type.Integer(), t: Type.String() });
export type TaskLogLine = Static<typeof TaskLogLine>;

/** One address as QEMU's guest agent reports it (`guest-network-get-interfaces`). */
export const GuestIpAddress = Type.Object({
  'ip-address': Type.String(),
  'ip-address-type': Type.String(),
  prefix: Type.Integer(),
});

export const GuestInterface = Type.Object({
  name: Type.String(),
  'hardware-address': opt(Type.String()),
  'ip-addresses': opt(Type.Array(GuestIpAddress)),
});
export type GuestInterface = Static<typeof GuestInterface>;

/** The agent passthrough answer: PVE wraps QGA's return in `result` (its schema says only "object"). */
export const GuestInterfaces = Type.Object({ result: Type.Array(GuestInterface) });
export type GuestInterfaces = Static<typeof GuestInterfaces>;
