// On libvirtd's test driver: a domain found by a machine's UUID without that machine's mark
// in its <metadata> is never written to, powered, resized or undefined, nor are its volumes
// deleted (test/peers/not-owned.ts). libvirt passes start no task they pick up later: a
// taskRef naming the victim (its domain name) is one a status may carry all the same.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import type { Backend, Connection, MachineRequest } from '../../../controller/backends/backend.js';
import { AffectFlags, XmlFlags } from '../../../controller/backends/libvirt/client/constants.js';
import type { StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import type { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { createLibvirtBackend } from '../../../controller/backends/libvirt/libvirt-backend.js';
import { releasedMetadataXml } from '../../../controller/backends/libvirt/machine/domain-xml.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { anchorClient, IMAGE_VOLUME, makeImageVolume, TEST_NETWORK, TEST_POOL } from '../../support/libvirt/world.js';
import { describeNotOwned, untilPresent, type NotOwnedWorld, type Victim } from '../not-owned.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

const log = silentLogger();

let daemon: Libvirtd;
// test:///default is reset when its last connection closes: this one stays open for the whole file.
let anchor: LibvirtClient;
let pool: StoragePool;
let world: NotOwnedWorld<LibvirtMachineSpec>;

const spec = (change: Partial<LibvirtMachineSpec> = {}): LibvirtMachineSpec => ({
  pool: TEST_POOL,
  bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
  vcpus: 1,
  memoryMiB: 128,
  disks: [{ name: 'os', sizeGiB: 1 }],
  network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
  ...change,
});

function request(name: string, uuid: string, change: Partial<LibvirtMachineSpec> = {}): MachineRequest<LibvirtMachineSpec> {
  return {
    name,
    namespace: 'vms',
    uuid,
    providerID: `libvirt://${uuid}`,
    owner: { kind: 'LibvirtMachine', namespace: 'vms', name },
    spec: spec(change),
    raw: {},
    userData: undefined,
  };
}

/** A domain defined and started by machine `name`'s own pass. */
async function victim(backend: Backend<LibvirtMachineSpec>, connection: Connection, name: string): Promise<Victim> {
  const uuid = randomUUID();
  const made = await untilPresent(() =>
    backend.machines.ensure(connection, request(name, uuid), { mayCreate: true, firstBoot: true, specChanged: false, log }),
  );
  return { uuid, ref: made.ref, taskRef: made.ref };
}

beforeAll(async () => {
  daemon = await startLibvirtd({ listenNetwork: false });
  anchor = await anchorClient(daemon);
  pool = await anchor.pools.lookupByName(TEST_POOL);
  await makeImageVolume(anchor, pool);
  const backend = createLibvirtBackend({});
  const connection: Connection = { endpoint: `test+unix:///default?socket=${daemon.socketPath}`, credentials: {}, insecureSkipTLSVerify: false };
  const unmarked = await victim(backend, connection, 'victim-a');
  // A domain banlieue did not define has no element of ours in its <metadata>.
  await anchor.domains.setMetadataElement(
    await anchor.domains.lookupByUuid(unmarked.uuid),
    { ...releasedMetadataXml(''), xml: undefined },
    AffectFlags.Live | AffectFlags.Config,
  );
  world = {
    backend,
    connection,
    victims: { 'carries no mark': unmarked, "carries another machine's mark": await victim(backend, connection, 'victim-b') },
    intruder: (uuid, taskRef) => ({
      ...request('intruder', uuid, { vcpus: 2, memoryMiB: 256, desiredPowerState: 'PoweredOff' }),
      userData: '#cloud-config\nhostname: intruder\n',
      ...(taskRef ? { taskRef } : {}),
    }),
    freshUuid: () => randomUUID(),
    snapshot: async ({ uuid }) => {
      const domain = await anchor.domains.lookupByUuid(uuid).catch(() => undefined);
      const volumes = (await anchor.pools.listVolumes(pool))
        .map((v) => v.name)
        .filter((n) => n.startsWith(`${uuid}-`))
        .sort();
      if (!domain) return { domain: 'undefined', volumes };
      return {
        state: (await anchor.domains.state(domain)).state,
        managedSave: await anchor.domains.hasManagedSaveImage(domain),
        live: await anchor.domains.xmlDesc(domain),
        persistent: await anchor.domains.xmlDesc(domain, XmlFlags.Inactive),
        volumes,
      };
    },
  };
}, 120_000);

afterAll(async () => {
  await world?.backend.close();
  await anchor?.close();
  await daemon?.stop();
});

describeNotOwned('libvirt', () => world);
