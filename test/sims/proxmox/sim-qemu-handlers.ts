// QEMU VM endpoints: list, config, clone, resize, power, delete, guest agent.
// Work that PVE does in a worker is a task here too: the call answers a UPID
// and the VM changes when the task ends.
import { randomUUID } from 'node:crypto';
import { failure, paramError } from './sim-errors.js';
import { bit, flag, int, optStr, str, type HandlerContext, type Routes } from './sim-handler.js';
import { agentEnabled, applyConfigChange, bridgesOf, checkConfigChange } from './sim-qemu-config.js';
import { formatSize, parseSize, randomMac, type SimVm } from './sim-state.js';

/** The VM of the call, on an online node. */
function vmOf(ctx: HandlerContext): SimVm {
  const node = ctx.state.onlineNode(str(ctx, 'node')).name;
  return ctx.state.vm(node, int(ctx, 'vmid'));
}

function unlocked(vm: SimVm): SimVm {
  if (vm.lock !== undefined) throw failure(`VM is locked (${vm.lock})`);
  return vm;
}

function running(vm: SimVm): SimVm {
  if (vm.status !== 'running') throw failure(`VM ${vm.vmid} not running`);
  return vm;
}

const memoryBytes = (vm: SimVm): number => Number(String(vm.config.memory ?? '512').replace(/^current=/, '')) * 1024 ** 2;

export const qemuRoutes: Routes = {
  'GET /nodes/{node}/qemu': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    return [...ctx.state.vms.values()]
      .filter((vm) => vm.node === node)
      .map((vm) => ({
        vmid: vm.vmid,
        status: vm.status,
        name: String(vm.config.name ?? ''),
        template: bit(vm.config.template === 1),
        ...(vm.config.tags === undefined ? {} : { tags: String(vm.config.tags) }),
        ...(vm.lock === undefined ? {} : { lock: vm.lock }),
        cpus: Number(vm.config.cores ?? 1) * Number(vm.config.sockets ?? 1),
        maxmem: memoryBytes(vm),
        uptime: vm.startedAt === undefined ? 0 : Math.floor((Date.now() - vm.startedAt) / 1000),
      }));
  },

  'GET /nodes/{node}/qemu/{vmid}/config': (ctx) => {
    const vm = vmOf(ctx);
    // Pending values applied, unless `current`: the values the running VM has.
    const pending = flag(ctx, 'current') ? {} : (vm.pending ?? {});
    return { ...vm.config, ...pending, ...(vm.lock === undefined ? {} : { lock: vm.lock }), digest: ctx.state.digest(vm) };
  },

  'PUT /nodes/{node}/qemu/{vmid}/config': (ctx) => {
    const vm = vmOf(ctx);
    checkConfigChange(ctx.state, vm, ctx.params);
    try {
      applyConfigChange(ctx.state, vm, ctx.params);
    } catch (error) {
      throw failure((error as Error).message);
    }
    return null;
  },

  'POST /nodes/{node}/qemu/{vmid}/config': (ctx) => {
    const vm = vmOf(ctx);
    checkConfigChange(ctx.state, vm, ctx.params);
    const params = { ...ctx.params };
    return ctx.tasks.start(vm.node, 'qmconfig', String(vm.vmid), ctx.user, () => applyConfigChange(ctx.state, vm, params));
  },

  'POST /nodes/{node}/qemu/{vmid}/clone': clone,

  'PUT /nodes/{node}/qemu/{vmid}/resize': (ctx) => {
    const vm = unlocked(vmOf(ctx));
    const disk = str(ctx, 'disk');
    const current = ctx.state.disks(vm).find((d) => d.key === disk);
    if (!current) throw failure(`disk '${disk}' does not exist`);
    const size = str(ctx, 'size');
    const wanted = size.startsWith('+') ? current.sizeBytes + parseSize(size) : parseSize(size);
    if (wanted < current.sizeBytes) throw failure(`shrinking disks is not supported`);
    return ctx.tasks.start(vm.node, 'resize', String(vm.vmid), ctx.user, () => {
      const volume = ctx.state.volumes.get(current.volid);
      if (volume) volume.sizeBytes = wanted;
      vm.config[disk] = String(vm.config[disk]).replace(/(^|,)size=[^,]+/, `$1size=${formatSize(wanted)}`);
    });
  },

  'GET /nodes/{node}/qemu/{vmid}/status/current': (ctx) => {
    const vm = vmOf(ctx);
    return {
      vmid: vm.vmid,
      status: vm.status,
      qmpstatus: vm.qmpstatus,
      name: String(vm.config.name ?? ''),
      ha: { managed: 0 },
      agent: bit(agentEnabled(vm)),
      cpus: Number(vm.config.cores ?? 1) * Number(vm.config.sockets ?? 1),
      maxmem: memoryBytes(vm),
      uptime: vm.startedAt === undefined ? 0 : Math.floor((Date.now() - vm.startedAt) / 1000),
      ...(vm.status === 'running' ? { pid: 10_000 + vm.vmid } : {}),
      ...(vm.config.template === 1 ? { template: 1 } : {}),
      ...(vm.config.tags === undefined ? {} : { tags: String(vm.config.tags) }),
      ...(vm.lock === undefined ? {} : { lock: vm.lock }),
    };
  },

  'POST /nodes/{node}/qemu/{vmid}/status/start': (ctx) => {
    const vm = unlocked(vmOf(ctx));
    if (vm.config.template === 1) throw failure(`you can't start a vm if it's a template`);
    if (vm.status === 'running') throw failure(`VM ${vm.vmid} already running`);
    return ctx.tasks.start(vm.node, 'qmstart', String(vm.vmid), ctx.user, () => {
      const missing = bridgesOf(vm).find((bridge) => !ctx.state.bridges.some((b) => b.node === vm.node && b.iface === bridge));
      if (missing !== undefined) return `bridge '${missing}' does not exist`;
      Object.assign(vm, { status: 'running', qmpstatus: 'running', startedAt: Date.now() });
      return undefined;
    });
  },

  'POST /nodes/{node}/qemu/{vmid}/status/stop': (ctx) => {
    const vm = unlocked(vmOf(ctx));
    return ctx.tasks.start(vm.node, 'qmstop', String(vm.vmid), ctx.user, () => {
      Object.assign(vm, { status: 'stopped', qmpstatus: 'stopped', startedAt: undefined });
      ctx.state.applyPending(vm);
    });
  },

  'POST /nodes/{node}/qemu/{vmid}/status/shutdown': (ctx) => {
    const vm = running(unlocked(vmOf(ctx)));
    const force = flag(ctx, 'forceStop');
    return ctx.tasks.start(vm.node, 'qmshutdown', String(vm.vmid), ctx.user, () => {
      if (!vm.honoursAcpi && !force) return 'VM quit/powerdown failed - got timeout';
      Object.assign(vm, { status: 'stopped', qmpstatus: 'stopped', startedAt: undefined });
      ctx.state.applyPending(vm);
      return undefined;
    });
  },

  'POST /nodes/{node}/qemu/{vmid}/status/suspend': (ctx) => {
    const vm = running(unlocked(vmOf(ctx)));
    return ctx.tasks.start(vm.node, 'qmsuspend', String(vm.vmid), ctx.user, () => void (vm.qmpstatus = 'paused'));
  },

  'POST /nodes/{node}/qemu/{vmid}/status/resume': (ctx) => {
    const vm = running(unlocked(vmOf(ctx)));
    return ctx.tasks.start(vm.node, 'qmresume', String(vm.vmid), ctx.user, () => void (vm.qmpstatus = 'running'));
  },

  'DELETE /nodes/{node}/qemu/{vmid}': (ctx) => {
    const vm = unlocked(vmOf(ctx));
    if (vm.status === 'running') throw failure(`VM ${vm.vmid} is running - destroy failed`);
    const everything = flag(ctx, 'destroy-unreferenced-disks');
    return ctx.tasks.start(vm.node, 'qmdestroy', String(vm.vmid), ctx.user, () => {
      const referenced = new Set([
        ...ctx.state.disks(vm).map((d) => d.volid),
        ...Object.entries(vm.config)
          .filter(([k]) => /^unused\d+$/.test(k))
          .map(([, v]) => String(v)),
      ]);
      for (const volume of [...ctx.state.volumes.values()]) {
        if (volume.vmid === vm.vmid && (everything || referenced.has(volume.volid))) ctx.state.volumes.delete(volume.volid);
      }
      ctx.state.vms.delete(vm.vmid);
    });
  },

  'GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces': (ctx) => {
    const vm = vmOf(ctx);
    if (vm.status !== 'running') throw failure(`VM ${vm.vmid} is not running`);
    if (!agentEnabled(vm)) throw failure('No QEMU guest agent configured');
    const delay = vm.agent.delayMs ?? ctx.behaviour.agentDelayMs;
    if (vm.agent.responding === false || (vm.startedAt ?? Infinity) + delay > Date.now()) throw failure('QEMU guest agent is not running');
    const mac = /^[a-z0-9-]+=([0-9A-Fa-f:]{17})/.exec(String(vm.config.net0 ?? ''))?.[1]?.toLowerCase() ?? '00:00:00:00:00:00';
    const addresses = vm.agent.addresses ?? [{ ip: `10.0.${(vm.vmid >> 8) & 255}.${vm.vmid & 255}`, prefix: 24 }];
    const ipAddresses = (list: readonly { ip: string; prefix: number }[]) =>
      list.map((a) => ({ 'ip-address': a.ip, 'ip-address-type': a.ip.includes(':') ? 'ipv6' : 'ipv4', prefix: a.prefix }));
    return {
      result: [
        { name: 'lo', 'hardware-address': '00:00:00:00:00:00', 'ip-addresses': [{ 'ip-address': '127.0.0.1', 'ip-address-type': 'ipv4', prefix: 8 }] },
        { name: 'eth0', 'hardware-address': mac, 'ip-addresses': ipAddresses(addresses) },
        ...(vm.agent.interfaces ?? []).map((i) => ({ name: i.name, 'hardware-address': i.mac, 'ip-addresses': ipAddresses(i.addresses) })),
      ],
    };
  },
};

/**
 * Clone as qemu-server does it: the new VMID is taken at once (its config
 * written with `lock: clone`), the disks are copied in the task, and a failed
 * task leaves nothing behind. Templates clone linked by default, VMs full.
 */
function clone(ctx: HandlerContext): string {
  const source = unlocked(vmOf(ctx));
  const newid = int(ctx, 'newid');
  const existing = ctx.state.vms.get(newid);
  if (existing) throw failure(`VM ${newid} already exists on node '${existing.node}'`);
  const isTemplate = source.config.template === 1;
  const full = flag(ctx, 'full', !isTemplate);
  if (!isTemplate && !full) throw paramError({ full: 'linked clone is only possible from a template' });
  const storageId = optStr(ctx, 'storage');
  if (storageId !== undefined && !full) throw paramError({ storage: 'only allowed for full clones' });
  const target = ctx.state.onlineNode(optStr(ctx, 'target') ?? source.node).name;
  const disks = ctx.state.disks(source);
  for (const disk of disks) {
    const storage = disk.volid.split(':')[0] ?? '';
    if (target !== source.node && !(ctx.state.storages.get(storage)?.shared ?? false)) {
      throw failure(`can't clone VM to node '${target}' (VM uses local storage '${storage}')`);
    }
  }
  const targetStorage = storageId === undefined ? undefined : ctx.state.storageOn(target, storageId);
  if (targetStorage && !targetStorage.content.includes('images')) throw failure(`storage '${targetStorage.id}' does not support vm images`);

  const config: Record<string, string | number> = { ...source.config };
  delete config.template;
  config.name = optStr(ctx, 'name') ?? `Copy-of-VM-${String(source.config.name ?? source.vmid)}`;
  const description = optStr(ctx, 'description');
  if (description !== undefined) config.description = description;
  config.smbios1 = `uuid=${randomUUID()}`;
  config.vmgenid = randomUUID();
  for (const [key, value] of Object.entries(config)) {
    if (/^net\d+$/.test(key)) config[key] = String(value).replace(/^([a-z0-9-]+)=[0-9A-Fa-f:]{17}/, `$1=${randomMac()}`);
  }
  const copies = disks.map((disk, i) => {
    const storage = targetStorage?.id ?? disk.volid.split(':')[0] ?? '';
    const name = `vm-${newid}-disk-${i}`;
    const volid = full ? `${storage}:${name}` : `${disk.volid}/${name}`;
    config[disk.key] = String(source.config[disk.key]).replace(disk.volid, volid);
    return { volid, storage, sizeBytes: disk.sizeBytes };
  });
  const vm = ctx.state.addVm({ vmid: newid, node: target, name: String(config.name), config });
  // addVm gave it a disk of its own; the clone's disks replace it.
  for (const volume of [...ctx.state.volumes.values()]) if (volume.vmid === newid) ctx.state.volumes.delete(volume.volid);
  vm.config = config;
  vm.lock = 'clone';
  return ctx.tasks.start(
    source.node,
    'qmclone',
    String(source.vmid),
    ctx.user,
    () => {
      for (const copy of copies) {
        const storage = ctx.state.storageOn(target, copy.storage);
        if (full && ctx.state.usedBytes(target, storage) + copy.sizeBytes > storage.totalBytes) {
          return `clone failed: not enough free space on storage '${storage.id}'`;
        }
        ctx.state.addVolume({
          volid: copy.volid,
          storage: storage.id,
          node: storage.shared ? undefined : target,
          content: 'images',
          format: 'raw',
          sizeBytes: copy.sizeBytes,
          vmid: newid,
        });
      }
      vm.lock = undefined;
      return undefined;
    },
    () => ctx.state.destroyVm(newid),
    {
      // qemu-server's clone_disk says which drive it clones, and how.
      lines: disks.map((disk) => `create ${full ? 'full' : 'linked'} clone of drive ${disk.key} (${disk.volid})`),
      copyBytes: full ? copies.reduce((sum, copy) => sum + copy.sizeBytes, 0) : 0,
    },
  );
}
