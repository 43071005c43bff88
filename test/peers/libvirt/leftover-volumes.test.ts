// On libvirtd's test driver: deleting a LibvirtMachine that finds no domain by its UUID (a
// crash between its volumes and its definition, or a domain undefined outside banlieue) deletes
// only volumes that carry that machine's mark. A machine whose spec.providerID names another
// machine's UUID (a hand-written one, a forged one) deletes none of that machine's volumes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { Backend, Connection, MachineRequest } from '../../../controller/backends/backend.js';
import type { StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import type { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { createLibvirtBackend } from '../../../controller/backends/libvirt/libvirt-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { anchorClient, IMAGE_VOLUME, makeImageVolume, TEST_NETWORK, TEST_POOL } from '../../support/libvirt/world.js';
import { waitFor } from '../../support/wait.js';
import { untilPresent } from '../not-owned.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

const log = silentLogger();

let daemon: Libvirtd;
// test:///default is reset when its last connection closes: this one stays open for the whole file.
let anchor: LibvirtClient;
let pool: StoragePool;
let backend: Backend<LibvirtMachineSpec>;
let connection: Connection;

function request(namespace: string, name: string, uuid: string): MachineRequest<LibvirtMachineSpec> {
  return {
    name,
    namespace,
    uuid,
    providerID: `libvirt://${uuid}`,
    owner: { kind: 'LibvirtMachine', namespace, name },
    spec: {
      pool: TEST_POOL,
      bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
      vcpus: 1,
      memoryMiB: 128,
      disks: [
        { name: 'os', sizeGiB: 1 },
        { name: 'data', sizeGiB: 1 },
      ],
      network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
    },
    raw: {},
    userData: '#cloud-config\n',
  };
}

/** The volumes in the pool whose names start with the UUID. */
async function volumesOf(uuid: string): Promise<string[]> {
  return (await anchor.pools.listVolumes(pool))
    .map((v) => v.name)
    .filter((n) => n.startsWith(`${uuid}-`))
    .sort();
}

/**
 * Machine `namespace/name`'s own pass made its domain and volumes; then the domain went (undefined
 * outside banlieue: what a crash between the volumes and the definition leaves looks the same).
 */
async function volumesWithoutDomain(namespace: string, name: string): Promise<{ uuid: string; volumes: string[] }> {
  const uuid = randomUUID();
  await untilPresent(() => backend.machines.ensure(connection, request(namespace, name, uuid), { mayCreate: true, firstBoot: true, specChanged: false, log }));
  const domain = await anchor.domains.lookupByUuid(uuid);
  if ((await anchor.domains.state(domain)).state === 1) await anchor.domains.destroy(domain);
  await anchor.domains.undefine(domain);
  const volumes = await volumesOf(uuid);
  expect(volumes.length, 'the machine made its OS disk, data disk and seed').toBe(3);
  return { uuid, volumes };
}

beforeAll(async () => {
  daemon = await startLibvirtd({ listenNetwork: false });
  anchor = await anchorClient(daemon);
  pool = await anchor.pools.lookupByName(TEST_POOL);
  await makeImageVolume(anchor, pool);
  backend = createLibvirtBackend({});
  connection = { endpoint: `test+unix:///default?socket=${daemon.socketPath}`, credentials: {}, insecureSkipTLSVerify: false };
}, 120_000);

afterAll(async () => {
  await backend?.close();
  await anchor?.close();
  await daemon?.stop();
});

describe('deleting a libvirt machine that finds no domain', () => {
  it("leaves another namespace's machine's volumes alone when its spec.providerID names that machine's UUID", async () => {
    const victim = await volumesWithoutDomain('payroll', 'db-0');
    const result = await backend.machines.destroy(connection, request('tenant', 'intruder', victim.uuid), { log });
    expect(result).toMatchObject({ state: 'Gone', existed: false });
    expect(await volumesOf(victim.uuid), "the victim's volumes are all still in the pool").toEqual(victim.volumes);
  });

  it("leaves another machine's volumes alone in its own namespace too", async () => {
    const victim = await volumesWithoutDomain('tenant', 'web-0');
    await backend.machines.destroy(connection, request('tenant', 'web-1', victim.uuid), { log });
    expect(await volumesOf(victim.uuid)).toEqual(victim.volumes);
  });

  it('deletes its own volumes, which carry its mark', async () => {
    const own = await volumesWithoutDomain('tenant', 'app-0');
    expect(await backend.machines.destroy(connection, request('tenant', 'app-0', own.uuid), { log })).toMatchObject({ state: 'Gone', existed: false });
    expect(await volumesOf(own.uuid)).toEqual([]);
  });

  it("deletes every volume of a domain it owns, the domain's disks and seed", async () => {
    const uuid = randomUUID();
    const own = request('tenant', 'app-1', uuid);
    await untilPresent(() => backend.machines.ensure(connection, own, { mayCreate: true, firstBoot: true, specChanged: false, log }));
    expect(await volumesOf(uuid)).toHaveLength(3);
    await waitFor(
      'the domain to be deleted',
      async () => ((await backend.machines.destroy(connection, own, { log })).state === 'Gone' ? true : undefined),
      60_000,
    );
    expect(await volumesOf(uuid)).toEqual([]);
  });
});
