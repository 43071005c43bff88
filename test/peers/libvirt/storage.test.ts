// Storage pools and volumes through the libvirt client against real
// libvirtds: the test driver's built-in pool for create/clone/inspect/delete,
// and the real storage driver (a directory pool, under the QEMU driver) for
// the upload and download streams, which the test driver does not implement.
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackendErrorKind, isBackendError } from '../../../controller/backends/backend-error.js';
import { StoragePoolState, StorageVolType } from '../../../controller/backends/libvirt/client/constants.js';
import { ErrorCode, isLibvirtError } from '../../../controller/backends/libvirt/client/libvirt-error.js';
import { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

/** Enough for the QEMU driver to start as root without the libvirt-qemu user, cgroups or a security driver. */
const ROOT_QEMU_CONF = ['user = "root"', 'group = "root"', 'security_driver = "none"', 'cgroup_controllers = [ ]', ''].join('\n');

const volumeXml = (name: string, bytes: number, format = 'raw'): string =>
  `<volume><name>${name}</name><capacity unit='bytes'>${bytes}</capacity><target><format type='${format}'/></target></volume>`;

describe('libvirt storage on the test driver', () => {
  let daemon: Libvirtd;
  let client: LibvirtClient;

  beforeAll(async () => {
    daemon = await startLibvirtd({ listenNetwork: false });
    client = await LibvirtClient.connect({ uri: `test+unix:///default?socket=${daemon.socketPath}` });
  });

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
  });

  it('lists the pools and reads one with its capacity', async () => {
    expect((await client.pools.list()).map((p) => p.name)).toContain('default-pool');
    const pool = await client.pools.lookupByName('default-pool');
    const info = await client.pools.info(pool);
    expect(info.state).toBe(StoragePoolState.Running);
    expect(info.capacityBytes).toBeGreaterThan(0);
    expect(await client.pools.xmlDesc(pool)).toContain('<name>default-pool</name>');
    await client.pools.refresh(pool);
  });

  it('creates a volume, clones it, reads both and deletes them', async () => {
    const pool = await client.pools.lookupByName('default-pool');
    const base = await client.volumes.create(pool, volumeXml(`base-${randomUUID()}.img`, 1 << 20));
    const clone = await client.volumes.createFrom(pool, volumeXml(`clone-${randomUUID()}.img`, 1 << 20), base);
    expect(await client.volumes.info(clone)).toMatchObject({ type: StorageVolType.File, capacityBytes: 1 << 20 });
    expect(await client.volumes.path(clone)).toContain(clone.name);
    expect(await client.volumes.lookupByName(pool, base.name)).toEqual(base);
    expect((await client.pools.listVolumes(pool)).map((v) => v.name)).toEqual(expect.arrayContaining([base.name, clone.name]));

    await client.volumes.delete(clone);
    await client.volumes.delete(base);
    const error = await client.volumes.lookupByName(pool, base.name).catch((e: unknown) => e);
    expect(isBackendError(error, BackendErrorKind.NotFound)).toBe(true);
    expect(isLibvirtError(error, ErrorCode.NO_STORAGE_VOL)).toBe(true);
  });

  it('reports a volume name already taken as Rejected', async () => {
    const pool = await client.pools.lookupByName('default-pool');
    const name = `taken-${randomUUID()}.img`;
    const vol = await client.volumes.create(pool, volumeXml(name, 4096));
    const error = await client.volumes.create(pool, volumeXml(name, 4096)).catch((e: unknown) => e);
    expect(isBackendError(error, BackendErrorKind.Rejected), String(error)).toBe(true);
    await client.volumes.delete(vol);
  });

  it('reports a missing pool as NotFound', async () => {
    const error = await client.pools.lookupByName('no-such-pool').catch((e: unknown) => e);
    expect(isLibvirtError(error, ErrorCode.NO_STORAGE_POOL)).toBe(true);
    expect(isBackendError(error, BackendErrorKind.NotFound)).toBe(true);
  });

  it('lists networks and reads one', async () => {
    const [network] = await client.networks.list();
    expect(network?.name).toBe('default');
    const found = await client.networks.lookupByName('default');
    expect(await client.networks.xmlDesc(found)).toContain('<name>default</name>');
    const missing = await client.networks.lookupByName('no-such-network').catch((e: unknown) => e);
    expect(isLibvirtError(missing, ErrorCode.NO_NETWORK) && isBackendError(missing, BackendErrorKind.NotFound)).toBe(true);
  });
});

describe('libvirt volume streams on the storage driver', () => {
  let daemon: Libvirtd;
  let client: LibvirtClient;

  beforeAll(async () => {
    daemon = await startLibvirtd({ listenNetwork: false, driverModules: ['qemu', 'storage'], configFiles: { 'qemu.conf': ROOT_QEMU_CONF } });
    client = await LibvirtClient.connect({ uri: `qemu+unix:///system?socket=${daemon.socketPath}` });
  });

  afterAll(async () => {
    await client?.close();
    await daemon?.stop();
  });

  it('uploads a file into a volume by stream and reads it back', async () => {
    const target = join(daemon.dir, 'pool');
    mkdirSync(target);
    const pool = await client.pools.createTransient(`<pool type='dir'><name>streams</name><target><path>${target}</path></target></pool>`);
    try {
      // More than one stream packet, and not a multiple of 4 (XDR padding must not leak into the data).
      const content = Buffer.alloc(600_001, 0);
      for (let i = 0; i < content.length; i += 1) content[i] = (i * 7) % 251;
      const vol = await client.volumes.create(pool, volumeXml('seed.iso', content.length));
      await client.volumes.upload(vol, content);
      expect((await client.volumes.info(vol)).capacityBytes).toBe(content.length);
      expect((await client.volumes.download(vol)).equals(content)).toBe(true);
      expect(await client.volumes.download(vol, { offset: 10, length: 5 })).toEqual(content.subarray(10, 15));
      await client.volumes.delete(vol);
    } finally {
      await client.pools.destroy(pool);
    }
  });

  it('fails an upload into a deleted volume with the daemon error, leaving the connection usable', async () => {
    const target = join(daemon.dir, 'gone');
    mkdirSync(target);
    const pool = await client.pools.createTransient(`<pool type='dir'><name>gone</name><target><path>${target}</path></target></pool>`);
    try {
      const vol = await client.volumes.create(pool, volumeXml('gone.img', 4096));
      await client.volumes.delete(vol);
      const error = await client.volumes.upload(vol, Buffer.from('data')).catch((e: unknown) => e);
      expect(isBackendError(error, BackendErrorKind.NotFound), String(error)).toBe(true);
      expect(await client.host.uri()).toBe('qemu:///system');
    } finally {
      await client.pools.destroy(pool);
    }
  });
});
