// Storages and networks of a node: lists, status, content, uploads, volume deletion.
import { failure, paramError } from './sim-errors.js';
import { bit, flag, optInt, optStr, str, type HandlerContext, type Routes } from './sim-handler.js';
import type { SimStorage } from './sim-state.js';

export const storageRoutes: Routes = {
  'GET /nodes/{node}/storage': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    const content = optStr(ctx, 'content')?.split(/[,;\s]+/) ?? [];
    const only = optStr(ctx, 'storage');
    return ctx.state
      .storagesOn(node)
      .filter((s) => (only === undefined || s.id === only) && (!flag(ctx, 'enabled') || s.enabled) && content.every((c) => s.content.includes(c)))
      .map((storage) => ({ storage: storage.id, ...statusOf(ctx, node, storage) }));
  },

  'GET /nodes/{node}/storage/{storage}/status': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    return statusOf(ctx, node, ctx.state.storageOn(node, str(ctx, 'storage')));
  },

  'GET /nodes/{node}/storage/{storage}/content': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    const storage = ctx.state.storageOn(node, str(ctx, 'storage'));
    const content = optStr(ctx, 'content');
    const vmid = optInt(ctx, 'vmid');
    return ctx.state
      .volumesOn(node, storage)
      .filter((v) => (content === undefined || v.content === content) && (vmid === undefined || v.vmid === vmid))
      .map((v) => ({ volid: v.volid, format: v.format, size: v.sizeBytes, ctime: v.ctime, ...(v.vmid === undefined ? {} : { vmid: v.vmid }) }));
  },

  'DELETE /nodes/{node}/storage/{storage}/content/{volume}': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    const storage = ctx.state.storageOn(node, str(ctx, 'storage'));
    const name = str(ctx, 'volume');
    const volid = name.includes(':') ? name : `${storage.id}:${name}`;
    const volume = ctx.state.volumesOn(node, storage).find((v) => v.volid === volid);
    if (!volume) throw failure(`volume '${volid}' does not exist`);
    return ctx.tasks.start(node, 'imgdel', volid, ctx.user, () => void ctx.state.volumes.delete(volid));
  },

  'POST /nodes/{node}/storage/{storage}/upload': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    const storage = ctx.state.storageOn(node, str(ctx, 'storage'));
    const content = str(ctx, 'content');
    const filename = str(ctx, 'filename');
    if (!storage.content.includes(content)) throw paramError({ storage: `storage '${storage.id}' does not support '${content}' content` });
    if (content === 'iso' && !/\.(iso|img)$/i.test(filename)) throw paramError({ filename: `wrong file extension` });
    const data = ctx.file;
    if (!data) throw paramError({ filename: 'no file uploaded' });
    const volid = `${storage.id}:${content}/${filename}`;
    return ctx.tasks.start(node, 'imgcopy', '', ctx.user, () => {
      if (ctx.state.usedBytes(node, storage) + data.length > storage.totalBytes) return `not enough space on storage '${storage.id}'`;
      ctx.state.volumes.delete(volid);
      ctx.state.addVolume({ volid, storage: storage.id, node: storage.shared ? undefined : node, content, format: content, sizeBytes: data.length });
      return undefined;
    });
  },

  'GET /nodes/{node}/network': (ctx) => {
    const node = ctx.state.onlineNode(str(ctx, 'node')).name;
    const type = optStr(ctx, 'type');
    const bridges = ctx.state.bridges
      .filter((b) => b.node === node)
      .map((b, i) => ({
        iface: b.iface,
        type: 'bridge',
        active: 1,
        autostart: 1,
        method: 'manual',
        method6: 'manual',
        families: ['inet'],
        priority: i + 2,
        bridge_ports: i === 0 ? 'eno1' : '',
        bridge_vlan_aware: bit(b.vlanAware),
      }));
    const nic = { iface: 'eno1', type: 'eth', active: 1, exists: 1, method: 'manual', method6: 'manual', families: ['inet'], priority: 1 };
    return type === undefined ? [nic, ...bridges] : type === 'eth' ? [nic] : bridges;
  },
};

function statusOf(ctx: HandlerContext, node: string, storage: SimStorage): Record<string, unknown> {
  const used = ctx.state.usedBytes(node, storage);
  return {
    type: storage.type,
    content: storage.content.join(','),
    shared: bit(storage.shared),
    enabled: bit(storage.enabled),
    active: bit(storage.enabled),
    total: storage.totalBytes,
    used,
    avail: storage.totalBytes - used,
  };
}
