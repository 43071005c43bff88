// The simulated cluster: nodes, storages and their volumes, bridges, VMs with
// their config dictionaries. Plain data with small helpers; the handlers
// (sim-*-handlers.ts) implement PVE's rules on top of it, and tests change it
// directly (a node going offline, a foreign VM, a guest agent's address).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { failure, PveHttpError } from './sim-errors.js';

export interface SimNode {
  readonly name: string;
  online: boolean;
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly ip: string;
}

export interface SimStorage {
  readonly id: string;
  /** PVE storage plugin: dir, lvmthin, nfs, rbd… */
  readonly type: string;
  readonly content: readonly string[];
  readonly shared: boolean;
  /** Nodes that have it; every node when omitted. A local storage exists once per node. */
  readonly nodes?: readonly string[];
  readonly totalBytes: number;
  enabled: boolean;
}

export interface SimVolume {
  readonly volid: string;
  readonly storage: string;
  /** The node holding a volume of a local storage; undefined on shared storage. */
  readonly node: string | undefined;
  readonly content: string;
  readonly format: string;
  sizeBytes: number;
  readonly vmid?: number;
  readonly ctime: number;
}

export interface SimBridge {
  readonly node: string;
  readonly iface: string;
  readonly vlanAware: boolean;
}

/** What the guest agent of a VM does. */
export interface SimAgent {
  /** The agent answers once the VM has run this long. @default the simulator's agentDelayMs */
  delayMs?: number;
  /** Addresses it reports; default one IPv4 derived from the VMID. */
  addresses?: readonly { readonly ip: string; readonly prefix: number }[];
  /** False: installed but never answering. @default true */
  responding?: boolean;
  /** Interfaces of the guest's own besides lo and eth0, e.g. a Kubernetes node's kube-ipvs0 holding every Service IP. */
  interfaces?: readonly { readonly name: string; readonly mac: string; readonly addresses: readonly { readonly ip: string; readonly prefix: number }[] }[];
}

export interface SimVm {
  vmid: number;
  node: string;
  /** The config file's keys (name, cores, net0, scsi0, smbios1…), values as PVE stores them. */
  config: Record<string, string | number>;
  status: 'running' | 'stopped';
  /** QMP state while running: running or paused (suspended). */
  qmpstatus: 'running' | 'paused' | 'stopped';
  lock: string | undefined;
  startedAt: number | undefined;
  agent: SimAgent;
  /** False: the guest ignores ACPI shutdown. @default true */
  honoursAcpi: boolean;
  /**
   * Changes made while it runs that PVE cannot hotplug (CPUs, memory with the
   * default `hotplug: network,disk,usb`): kept pending, shown by GET config
   * unless `current=1`, applied when the VM stops.
   */
  pending?: Record<string, string | number>;
}

const GIB = 1024 ** 3;

export class SimState {
  readonly clusterName: string;
  readonly nodes = new Map<string, SimNode>();
  readonly storages = new Map<string, SimStorage>();
  readonly volumes = new Map<string, SimVolume>();
  readonly bridges: SimBridge[] = [];
  readonly vms = new Map<number, SimVm>();
  /** Each id /cluster/nextid hands out while > 0 is taken by a foreign writer right after (a race). */
  stealNextIds = 0;

  constructor(clusterName: string) {
    this.clusterName = clusterName;
  }

  node(name: string): SimNode {
    const node = this.nodes.get(name);
    if (!node) throw failure(`hostname lookup '${name}' failed - failed to get address info for: ${name}: Name or service not known`);
    return node;
  }

  /** A node the call is proxied to: gone while offline (pveproxy's 595). */
  onlineNode(name: string): SimNode {
    const node = this.node(name);
    if (!node.online) throw new PveHttpError(595, 'Errors during connection establishment, proxy handshake: No route to host');
    return node;
  }

  setNodeOnline(name: string, online: boolean): void {
    this.node(name).online = online;
  }

  storagesOn(node: string): SimStorage[] {
    return [...this.storages.values()].filter((s) => s.nodes === undefined || s.nodes.includes(node));
  }

  storageOn(node: string, id: string): SimStorage {
    const storage = this.storagesOn(node).find((s) => s.id === id);
    if (!storage) throw failure(`storage '${id}' does not exist`);
    return storage;
  }

  /** Volumes of `storage` as seen from `node`. */
  volumesOn(node: string, storage: SimStorage): SimVolume[] {
    return [...this.volumes.values()].filter((v) => v.storage === storage.id && (storage.shared || v.node === node));
  }

  usedBytes(node: string, storage: SimStorage): number {
    return this.volumesOn(node, storage).reduce((sum, v) => sum + v.sizeBytes, 0);
  }

  addVolume(volume: Omit<SimVolume, 'ctime'>): SimVolume {
    const full = { ...volume, ctime: Math.floor(Date.now() / 1000) };
    this.volumes.set(full.volid, full);
    return full;
  }

  /** The VM `vmid` on `node`, as qemu-server finds its config file. */
  vm(node: string, vmid: number): SimVm {
    const vm = this.vms.get(vmid);
    if (!vm || vm.node !== node) throw failure(`Configuration file 'nodes/${node}/qemu-server/${vmid}.conf' does not exist`);
    return vm;
  }

  /** Adds a VM or template directly (a template to clone, a foreign VM); its disk is allocated on `storage`. */
  addVm(spec: AddVmSpec): SimVm {
    if (this.vms.has(spec.vmid)) throw new Error(`VM ${spec.vmid} already exists`);
    const storage = spec.storage ?? 'local-lvm';
    const prefix = spec.template ? 'base' : 'vm';
    const disk = `${prefix}-${spec.vmid}-disk-0`;
    const shared = this.storages.get(storage)?.shared ?? false;
    this.addVolume({
      volid: `${storage}:${disk}`,
      storage,
      node: shared ? undefined : spec.node,
      content: 'images',
      format: 'raw',
      sizeBytes: (spec.diskGiB ?? 10) * GIB,
      vmid: spec.vmid,
    });
    const config: Record<string, string | number> = {
      name: spec.name,
      cores: 1,
      sockets: 1,
      memory: '2048',
      ostype: 'l26',
      scsihw: 'virtio-scsi-single',
      scsi0: `${storage}:${disk},size=${spec.diskGiB ?? 10}G`,
      net0: `virtio=${randomMac()},bridge=vmbr0`,
      agent: '1',
      smbios1: `uuid=${spec.uuid ?? randomUUID()}`,
      vmgenid: randomUUID(),
      ...(spec.template ? { template: 1 } : {}),
      ...spec.config,
    };
    const vm: SimVm = {
      vmid: spec.vmid,
      node: spec.node,
      config,
      status: spec.running ? 'running' : 'stopped',
      qmpstatus: spec.running ? 'running' : 'stopped',
      lock: undefined,
      startedAt: spec.running ? Date.now() : undefined,
      agent: {},
      honoursAcpi: true,
    };
    this.vms.set(vm.vmid, vm);
    return vm;
  }

  /** The VM's disks: `scsi0` → its volume id and size in bytes. */
  disks(vm: SimVm): { key: string; volid: string; sizeBytes: number }[] {
    return Object.entries(vm.config)
      .filter(([key, value]) => /^(scsi|sata|ide|virtio|efidisk|tpmstate)\d+$/.test(key) && typeof value === 'string' && !value.includes('media=cdrom'))
      .map(([key, value]) => {
        const text = String(value);
        const volid = text.split(',')[0] ?? '';
        return { key, volid, sizeBytes: parseSize(/(?:^|,)size=([^,]+)/.exec(text)?.[1] ?? '0') };
      });
  }

  /** The VM has stopped: what was pending is its config now. */
  applyPending(vm: SimVm): void {
    Object.assign(vm.config, vm.pending ?? {});
    delete vm.pending;
  }

  /** Removes the VM and its volumes. */
  destroyVm(vmid: number): void {
    const vm = this.vms.get(vmid);
    if (!vm) return;
    for (const volume of [...this.volumes.values()]) if (volume.vmid === vmid) this.volumes.delete(volume.volid);
    this.vms.delete(vmid);
  }

  /** The lowest free VMID from 100 (datacenter.cfg next-id default). */
  nextFreeId(): number {
    let id = 100;
    while (this.vms.has(id)) id += 1;
    return id;
  }

  /** SHA1 of the config as PVE digests the file: changes whenever the config does. */
  digest(vm: SimVm): string {
    return createHash('sha1')
      .update(JSON.stringify(Object.entries(vm.config).sort()))
      .digest('hex');
  }
}

export interface AddVmSpec {
  readonly vmid: number;
  readonly node: string;
  readonly name: string;
  readonly template?: boolean;
  /** Storage of its one disk (scsi0). @default local-lvm */
  readonly storage?: string;
  /** @default 10 */
  readonly diskGiB?: number;
  readonly uuid?: string;
  readonly running?: boolean;
  /** Extra or overriding config keys (description, tags, net1…). */
  readonly config?: Readonly<Record<string, string | number>>;
}

/** `10G`, `512M`, `+2G` (sign ignored) → bytes. */
export function parseSize(size: string): number {
  const match = /^\+?(\d+(?:\.\d+)?)([KMGT]?)$/.exec(size);
  if (!match) return 0;
  const unit = { '': 1, K: 1024, M: 1024 ** 2, G: GIB, T: 1024 ** 4 }[match[2] ?? ''] ?? 1;
  return Math.round(Number(match[1]) * unit);
}

/** Bytes → PVE's size notation (`10G`). */
export function formatSize(bytes: number): string {
  for (const [unit, factor] of [
    ['T', 1024 ** 4],
    ['G', GIB],
    ['M', 1024 ** 2],
    ['K', 1024],
  ] as const) {
    if (bytes % factor === 0 && bytes >= factor) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

/** A random MAC in Proxmox's own prefix BC:24:11, as PVE generates for a NIC without one. */
export function randomMac(): string {
  const hex = randomBytes(3).toString('hex').toUpperCase();
  return `BC:24:11:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}
