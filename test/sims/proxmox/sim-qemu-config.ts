// Changing a simulated VM's config as qemu-server does: `delete` first (a
// removed disk becomes `unusedN`), new disks from `STORAGE:SIZE` allocated,
// NICs without a MAC given one, the digest and lock respected.
import { failure } from './sim-errors.js';
import { randomMac, type SimState, type SimVm } from './sim-state.js';

/** Parameters that steer the change instead of being config keys. */
const CONTROL_KEYS = new Set(['node', 'vmid', 'delete', 'digest', 'background_delay', 'skiplock', 'force', 'revert']);
const DISK_KEY = /^(scsi|sata|ide|virtio)\d+$|^efidisk0$|^tpmstate0$/;
const NEW_DISK = /^([a-z][a-z0-9\-_.]*[a-z0-9]):(\d+(?:\.\d+)?)$/i;
/** Models that double as the MAC's key: `virtio=BC:24:11:…`. */
const NET_MODELS = new Set([
  'e1000',
  'e1000-82540em',
  'e1000-82544gc',
  'e1000-82545em',
  'e1000e',
  'i82551',
  'i82557b',
  'i82559er',
  'ne2k_isa',
  'ne2k_pci',
  'pcnet',
  'rtl8139',
  'virtio',
  'vmxnet3',
]);
const GIB = 1024 ** 3;
/** What a running VM cannot take at once under PVE's default hotplug (network,disk,usb): it waits for the next cold start. */
const COLD_KEYS = new Set(['cores', 'sockets', 'memory', 'cpu', 'bios', 'numa', 'machine']);

/** Refuses a change PVE would refuse before doing anything (lock, digest); the handler then applies it. */
export function checkConfigChange(state: SimState, vm: SimVm, params: Readonly<Record<string, unknown>>): void {
  if (vm.lock !== undefined) throw failure(`VM is locked (${vm.lock})`);
  const digest = params.digest;
  if (typeof digest === 'string' && digest !== state.digest(vm)) throw failure('detected modified configuration - file changed by other user? Try again.');
}

/** Applies the change; throws (a task's failure text) when a disk cannot be allocated. */
export function applyConfigChange(state: SimState, vm: SimVm, params: Readonly<Record<string, unknown>>): void {
  const deletions = typeof params.delete === 'string' ? params.delete.split(/[,;\s]+/).filter((k) => k !== '') : [];
  for (const key of deletions) {
    const value = vm.config[key];
    delete vm.config[key];
    if (DISK_KEY.test(key) && typeof value === 'string' && !value.includes('media=cdrom'))
      vm.config[`unused${nextIndex(vm, 'unused')}`] = value.split(',')[0] ?? value;
  }
  for (const [key, value] of Object.entries(params)) {
    if (CONTROL_KEYS.has(key) || value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    if (vm.status === 'running' && COLD_KEYS.has(key)) (vm.pending ??= {})[key] = value;
    else if (DISK_KEY.test(key) && typeof value === 'string') vm.config[key] = diskValue(state, vm, value);
    else if (/^net\d+$/.test(key) && typeof value === 'string') vm.config[key] = netValue(value);
    else if (key === 'tags' && typeof value === 'string')
      vm.config[key] = value
        .split(/[;, ]+/)
        .filter((t) => t !== '')
        .join(';');
    else vm.config[key] = value;
  }
}

/** `local-lvm:32,iothread=1` → a new volume; `local:iso/x.iso,media=cdrom` → checked to exist; `local-lvm:cloudinit`. */
function diskValue(state: SimState, vm: SimVm, value: string): string {
  const [file = '', ...options] = value.split(',');
  const storageOf = (id: string): ReturnType<SimState['storageOn']> => state.storageOn(vm.node, id);
  const cloudinit = /^([^:]+):cloudinit$/.exec(file);
  if (cloudinit?.[1]) {
    const storage = storageOf(cloudinit[1]);
    const volid = `${storage.id}:vm-${vm.vmid}-cloudinit`;
    state.addVolume({
      volid,
      storage: storage.id,
      node: storage.shared ? undefined : vm.node,
      content: 'images',
      format: 'raw',
      sizeBytes: 4 * 1024 ** 2,
      vmid: vm.vmid,
    });
    return [volid, 'media=cdrom', ...options.filter((o) => o !== 'media=cdrom')].join(',');
  }
  const fresh = NEW_DISK.exec(file);
  if (fresh?.[1] && fresh[2]) {
    const storage = storageOf(fresh[1]);
    if (!storage.content.includes('images')) throw new Error(`storage '${storage.id}' does not support vm images`);
    const sizeBytes = Math.round(Number(fresh[2]) * GIB);
    if (state.usedBytes(vm.node, storage) + sizeBytes > storage.totalBytes) throw new Error(`not enough free space on storage '${storage.id}'`);
    const volid = `${storage.id}:vm-${vm.vmid}-disk-${nextDiskNumber(state, vm.vmid)}`;
    state.addVolume({ volid, storage: storage.id, node: storage.shared ? undefined : vm.node, content: 'images', format: 'raw', sizeBytes, vmid: vm.vmid });
    return [volid, ...options, `size=${fresh[2]}G`].join(',');
  }
  if (file !== 'none' && file !== 'cdrom' && !file.startsWith('/') && !state.volumes.has(file)) throw failure(`volume '${file}' does not exist`);
  return value;
}

/** `virtio,bridge=vmbr0` or `model=virtio,…` → `virtio=<MAC>,bridge=vmbr0`, as PVE stores a NIC. */
function netValue(value: string): string {
  let model: string | undefined;
  let mac: string | undefined;
  const rest: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? undefined : part.slice(0, eq);
    const item = eq < 0 ? part : part.slice(eq + 1);
    if (key === undefined || key === 'model') model = item;
    else if (key === 'macaddr') mac = item;
    else if (NET_MODELS.has(key)) [model, mac] = [key, item];
    else rest.push(part);
  }
  return [`${model ?? 'virtio'}=${mac ?? randomMac()}`, ...rest].join(',');
}

function nextIndex(vm: SimVm, prefix: string): number {
  let i = 0;
  while (vm.config[`${prefix}${i}`] !== undefined) i += 1;
  return i;
}

function nextDiskNumber(state: SimState, vmid: number): number {
  let n = 0;
  while ([...state.volumes.keys()].some((volid) => volid.endsWith(`vm-${vmid}-disk-${n}`))) n += 1;
  return n;
}

/** The bridges the VM's NICs use (checked when it starts, as qemu-server does). */
export function bridgesOf(vm: SimVm): string[] {
  return Object.entries(vm.config)
    .filter(([key]) => /^net\d+$/.test(key))
    .flatMap(([, value]) => /(?:^|,)bridge=([^,]+)/.exec(String(value))?.[1] ?? []);
}

/** `agent: 1` or `enabled=1,…`. */
export function agentEnabled(vm: SimVm): boolean {
  const value = String(vm.config.agent ?? '0');
  return /^(1|enabled=1)(,|$)/.test(value) || /(^|,)enabled=1(,|$)/.test(value);
}
