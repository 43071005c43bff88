// Releasing a LibvirtMachine's domain (spec.deletionPolicy Retain) on a real
// libvirtd (test driver): the domain stays defined and running with its
// volumes, its <metadata> mark gone (the mark it had kept as released-from),
// and from then on no machine adopts or destroys it, not even the one that
// defined it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LibvirtMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/libvirt-machine.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import type { Backend, Connection, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import { DomainState, XmlFlags } from '../../../controller/backends/libvirt/client/constants.js';
import type { Domain, StoragePool } from '../../../controller/backends/libvirt/client/handles.js';
import type { LibvirtClient } from '../../../controller/backends/libvirt/client/libvirt-client.js';
import { createLibvirtBackend } from '../../../controller/backends/libvirt/libvirt-backend.js';
import { marksOf } from '../../../controller/backends/libvirt/machine/domain-xml.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { anchorClient, IMAGE_VOLUME, makeImageVolume, TEST_NETWORK, TEST_POOL } from '../../support/libvirt/world.js';
import { startLibvirtd, type Libvirtd } from './libvirtd.js';

const log = silentLogger();
const UUID = randomUUID();

let daemon: Libvirtd;
// test:///default is reset when its last connection closes: this one stays open for the whole file.
let anchor: LibvirtClient;
let pool: StoragePool;
let backend: Backend<LibvirtMachineSpec>;
let connection: Connection;

beforeAll(async () => {
  daemon = await startLibvirtd({ listenNetwork: false });
  anchor = await anchorClient(daemon);
  pool = await anchor.pools.lookupByName(TEST_POOL);
  await makeImageVolume(anchor, pool);
  backend = createLibvirtBackend({});
  connection = { endpoint: `test+unix:///default?socket=${daemon.socketPath}`, credentials: {}, insecureSkipTLSVerify: false };
});

afterAll(async () => {
  await backend?.close();
  await anchor?.close();
  await daemon?.stop();
});

const request = (name = 'keep-1', uuid = UUID): MachineRequest<LibvirtMachineSpec> => ({
  name: 'keep-1',
  namespace: 'vms',
  uuid,
  providerID: `libvirt://${uuid}`,
  owner: { kind: 'LibvirtMachine', namespace: 'vms', name },
  spec: {
    pool: TEST_POOL,
    bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
    vcpus: 1,
    memoryMiB: 128,
    disks: [{ name: 'os', sizeGiB: 1 }],
    network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
    deletionPolicy: 'Retain',
  },
  raw: {},
  userData: undefined,
});

/** A first-boot pass of `owner`'s machine: it may create, and adopts only with its mark. */
const adopt = (owner: string): Promise<EnsureResult> =>
  backend.machines.ensure(connection, request(owner), { mayCreate: owner === 'keep-1', firstBoot: true, specChanged: false, log });

const domain = (): Promise<Domain> => anchor.domains.lookupByUuid(UUID);
const volumes = async (): Promise<string[]> =>
  (await anchor.pools.listVolumes(pool))
    .map((v) => v.name)
    .filter((n) => n.startsWith(`${UUID}-`))
    .sort();

describe('releasing a libvirt domain (deletionPolicy Retain)', () => {
  let made: string[];

  it('defines and starts the domain with its mark', async () => {
    expect(await adopt('keep-1')).toMatchObject({ state: 'Present', observation: { powerState: 'PoweredOn' } });
    expect(marksOf(await anchor.domains.xmlDesc(await domain()))).toEqual({ owner: 'LibvirtMachine/vms/keep-1', releasedFrom: undefined });
    made = await volumes();
    expect(made.length).toBeGreaterThan(0);
  });

  it('leaves the domain running with its volumes, its live and persistent XML without the mark', async () => {
    const before = await domain();

    expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: before.name });

    const after = await domain();
    expect(after).toEqual(before);
    expect((await anchor.domains.state(after)).state).toBe(DomainState.Running);
    expect(await volumes()).toEqual(made);
    for (const flags of [0, XmlFlags.Inactive]) {
      expect(marksOf(await anchor.domains.xmlDesc(after, flags))).toEqual({ owner: undefined, releasedFrom: 'LibvirtMachine/vms/keep-1' });
    }
  });

  it('releases it again without a change when its pass runs twice', async () => {
    expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: (await domain()).name });
  });

  it.each(['intruder', 'keep-1'])('refuses adoption by machine %s afterwards (NotOwned), and its deletion leaves the domain and volumes', async (owner) => {
    const adoption = await adopt(owner).catch((e: unknown) => e);
    expect(isBackendError(adoption, 'NotOwned')).toBe(true);
    const deletion = await backend.machines.destroy(connection, request(owner), { log }).catch((e: unknown) => e);
    expect(isBackendError(deletion, 'NotOwned')).toBe(true);
    expect((await anchor.domains.state(await domain())).state).toBe(DomainState.Running);
    expect(await volumes()).toEqual(made);
  });

  it("refuses to release another machine's domain (NotOwned)", async () => {
    const error = await backend.machines.release(connection, request('intruder'), { log }).catch((e: unknown) => e);
    expect(isBackendError(error, 'NotOwned')).toBe(true);
  });

  it('finds nothing to release when no domain has the UUID', async () => {
    expect(await backend.machines.release(connection, request('keep-1', randomUUID()), { log })).toEqual({ state: 'Absent' });
  });
});
