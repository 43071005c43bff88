// Cluster-wide endpoints: version, nodes, node status, cluster status and
// resources, nextid, task status and log.
import { PveHttpError, paramError } from './sim-errors.js';
import { bit, optInt, optStr, str, type Routes } from './sim-handler.js';
import type { SimState } from './sim-state.js';

const GIB = 1024 ** 3;

export const clusterRoutes: Routes = {
  'GET /version': () => ({ version: '9.1.1', release: '9.1', repoid: '5e6fa1c2' }),

  'GET /nodes': ({ state }) =>
    [...state.nodes.values()].map((node) =>
      node.online
        ? {
            node: node.name,
            status: 'online',
            cpu: 0.05,
            maxcpu: node.cpus,
            mem: usedMemory(state, node.name),
            maxmem: node.memoryBytes,
            uptime: 86_400,
            level: '',
          }
        : { node: node.name, status: 'offline' },
    ),

  'GET /nodes/{node}/status': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node'));
    const used = usedMemory(ctx.state, node.name);
    return {
      cpu: 0.05,
      cpuinfo: { cpus: node.cpus, cores: node.cpus, sockets: 1, model: 'QEMU Virtual CPU (simulated)' },
      memory: { total: node.memoryBytes, used, free: node.memoryBytes - used, available: node.memoryBytes - used },
      rootfs: { total: 100 * GIB, used: 10 * GIB, free: 90 * GIB, avail: 90 * GIB },
      loadavg: ['0.10', '0.05', '0.01'],
      pveversion: 'pve-manager/9.1.1/5e6fa1c2',
      'boot-info': { mode: 'efi', secureboot: 0 },
      'current-kernel': { sysname: 'Linux', release: '6.14.8-2-pve', version: '#1 SMP PREEMPT_DYNAMIC', machine: 'x86_64' },
    };
  },

  'GET /cluster/status': ({ state }) => {
    const nodes = [...state.nodes.values()];
    const online = nodes.filter((n) => n.online).length;
    return [
      { type: 'cluster', id: 'cluster', name: state.clusterName, nodes: nodes.length, quorate: bit(online * 2 > nodes.length), version: nodes.length + 1 },
      ...nodes.map((node, i) => ({
        type: 'node',
        id: `node/${node.name}`,
        name: node.name,
        nodeid: i + 1,
        ip: node.ip,
        online: bit(node.online),
        local: bit(i === 0),
        level: '',
      })),
    ];
  },

  'GET /cluster/resources': (ctx) => {
    const type = optStr(ctx, 'type');
    return [
      ...(type === undefined || type === 'node' ? nodeResources(ctx.state) : []),
      ...(type === undefined || type === 'storage' ? storageResources(ctx.state) : []),
      ...(type === undefined || type === 'vm' ? vmResources(ctx.state) : []),
    ];
  },

  'GET /cluster/nextid': (ctx) => {
    const asked = optInt(ctx, 'vmid');
    if (asked !== undefined && ctx.state.vms.has(asked)) throw paramError({ vmid: `VM ${asked} already exists` });
    const id = asked ?? ctx.state.nextFreeId();
    if (ctx.state.stealNextIds > 0) {
      // The race: another writer takes the id between this answer and the clone.
      ctx.state.stealNextIds -= 1;
      const node = [...ctx.state.nodes.values()].find((n) => n.online)?.name ?? 'pve1';
      ctx.state.addVm({ vmid: id, node, name: `intruder-${id}` });
    }
    return id;
  },

  'GET /nodes/{node}/tasks/{upid}/status': (ctx) => {
    ctx.state.onlineNode(str(ctx, 'node'));
    const task = ctx.tasks.get(str(ctx, 'upid'));
    return {
      upid: task.upid,
      node: task.node,
      pid: task.pid,
      pstart: task.pstart,
      starttime: task.starttime,
      type: task.type,
      id: task.id,
      user: task.user,
      status: task.status,
      ...(task.exitstatus === undefined ? {} : { exitstatus: task.exitstatus }),
    };
  },

  // As PVE::Tools::dump_logfile: `limit` lines from line `start` (0-based), numbered from 1.
  'GET /nodes/{node}/tasks/{upid}/log': (ctx) => {
    ctx.state.onlineNode(str(ctx, 'node'));
    if (ctx.params.download !== undefined) throw new PveHttpError(501, 'simulator: task log download is not simulated');
    const task = ctx.tasks.get(str(ctx, 'upid'));
    const start = optInt(ctx, 'start') ?? 0;
    const limit = optInt(ctx, 'limit') ?? 50;
    return task.log.slice(start, start + limit).map((t, i) => ({ n: start + i + 1, t }));
  },
};

function usedMemory(state: SimState, node: string): number {
  return [...state.vms.values()]
    .filter((vm) => vm.node === node && vm.status === 'running')
    .reduce((sum, vm) => sum + Number(String(vm.config.memory ?? '512').replace(/^current=/, '')) * 1024 ** 2, 2 * GIB);
}

function nodeResources(state: SimState): object[] {
  return [...state.nodes.values()].map((node) => ({
    id: `node/${node.name}`,
    type: 'node',
    node: node.name,
    status: node.online ? 'online' : 'offline',
    ...(node.online ? { maxcpu: node.cpus, maxmem: node.memoryBytes, mem: usedMemory(state, node.name), cpu: 0.05, uptime: 86_400 } : {}),
    level: '',
  }));
}

function storageResources(state: SimState): object[] {
  return [...state.nodes.values()].flatMap((node) =>
    state.storagesOn(node.name).map((storage) => ({
      id: `storage/${node.name}/${storage.id}`,
      type: 'storage',
      node: node.name,
      storage: storage.id,
      plugintype: storage.type,
      status: node.online ? 'available' : 'unknown',
      shared: bit(storage.shared),
      content: storage.content.join(','),
      maxdisk: storage.totalBytes,
      disk: state.usedBytes(node.name, storage),
    })),
  );
}

function vmResources(state: SimState): object[] {
  return [...state.vms.values()].map((vm) => {
    const online = state.nodes.get(vm.node)?.online ?? false;
    return {
      id: `qemu/${vm.vmid}`,
      type: 'qemu',
      vmid: vm.vmid,
      node: vm.node,
      name: String(vm.config.name ?? ''),
      status: online ? vm.status : 'unknown',
      template: bit(vm.config.template === 1),
      ...(vm.config.tags === undefined ? {} : { tags: String(vm.config.tags) }),
      ...(vm.lock === undefined ? {} : { lock: vm.lock }),
      maxcpu: Number(vm.config.cores ?? 1) * Number(vm.config.sockets ?? 1),
      maxmem: Number(String(vm.config.memory ?? '512').replace(/^current=/, '')) * 1024 ** 2,
      uptime: vm.startedAt === undefined ? 0 : Math.floor((Date.now() - vm.startedAt) / 1000),
    };
  });
}
