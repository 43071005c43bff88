// Releasing a VSphereMachine's VM (spec.deletionPolicy Retain) against vcsim:
// the VM stays, powered on as it was, its `banlieue.owner` extraConfig gone
// (the mark it had kept as `banlieue.released-from`), and from then on no
// machine adopts or destroys it, not even the one that made it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VSphereMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import type { Backend, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import type { ManagedObjectReference } from '../../../controller/backends/vsphere/client/vim-types.js';
import type { VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { createVsphereBackend } from '../../../controller/backends/vsphere/vsphere-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { waitFor } from '../../support/wait.js';
import { makeTemplate, vcsimClient } from '../../support/vsphere/world.js';
import { startVcsim, type Vcsim } from './vcsim.js';

const log = silentLogger();
const UUID = randomUUID();

let sim: Vcsim;
let client: VsphereClient;
let backend: Backend<VSphereMachineSpec>;

beforeAll(async () => {
  // Each clone task runs 3 s, so a release finds one running; LockHandoff:0 keeps the template readable meanwhile.
  sim = await startVcsim({ datacenters: 1, clusters: 1, methodDelayMs: { CloneVm: 3_000, LockHandoff: 0 } });
  client = await vcsimClient(sim);
  await makeTemplate(client, 'release-template');
  backend = createVsphereBackend({});
});

afterAll(async () => {
  await backend?.close();
  await client?.close();
  await sim?.stop();
});

const connection = (): Parameters<Backend['machines']['ensure']>[0] => ({
  endpoint: sim.url,
  credentials: { username: sim.username, password: sim.password },
  caPem: sim.caPem,
  insecureSkipTLSVerify: false,
});

const request = (name = 'keep-1'): MachineRequest<VSphereMachineSpec> => ({
  name: 'keep-1',
  namespace: 'vms',
  uuid: UUID,
  providerID: `vsphere://${UUID}`,
  owner: { kind: 'VSphereMachine', namespace: 'vms', name },
  spec: { template: 'release-template', datacenter: 'DC0', cluster: 'DC0_C0', numCpus: 1, memoryMiB: 256, deletionPolicy: 'Retain' },
  raw: {},
  userData: undefined,
});

/** A first-boot pass of `owner`'s machine: it may create, and adopts only with its mark. */
const adopt = (owner: string, taskRef?: string): Promise<EnsureResult> =>
  backend.machines.ensure(
    connection(),
    { ...request(owner), ...(taskRef ? { taskRef } : {}) },
    { mayCreate: owner === 'keep-1', firstBoot: true, specChanged: false, log },
  );

async function vm(): Promise<ManagedObjectReference> {
  const found = await client.search.findVmByBiosUuid(UUID);
  if (!found) throw new Error(`no VM with UUID ${UUID} in vcsim`);
  return found;
}

describe('releasing a vSphere VM (deletionPolicy Retain)', () => {
  it('waits out a clone still running, as a deletion does', async () => {
    const started = await adopt('keep-1');
    if (started.state !== 'InProgress') throw new Error(`expected a clone to start, got ${started.state}`);
    expect(await backend.machines.release(connection(), { ...request(), taskRef: started.taskRef }, { log })).toEqual({
      state: 'InProgress',
      message: expect.stringMatching(/^waiting for CloneVm task-\d+ to end before releasing the VM$/) as unknown,
    });
    await waitFor(
      'the clone to end and the VM to run',
      async () => {
        const pass = await adopt('keep-1', started.taskRef);
        return pass.state === 'Present' && pass.observation.powerState === 'PoweredOn';
      },
      60_000,
    );
  });

  it('leaves the VM powered on with its disks, without banlieue.owner, and says which machine it was', async () => {
    const before = await vm();
    expect((await client.vms.summary(before)).powerState).toBe('poweredOn');
    const disks = (await client.vms.hardware(before)).disks.map((d) => d.capacityKB);

    expect(await backend.machines.release(connection(), request(), { log })).toEqual({ state: 'Released', ref: before.value });

    const after = await vm();
    expect(after).toEqual(before);
    expect((await client.vms.summary(after)).powerState).toBe('poweredOn');
    expect((await client.vms.hardware(after)).disks.map((d) => d.capacityKB)).toEqual(disks);
    const extraConfig = await client.vms.extraConfig(after);
    expect(extraConfig.has('banlieue.owner')).toBe(false);
    expect(extraConfig.get('banlieue.released-from')).toBe('VSphereMachine/vms/keep-1');
  });

  it('releases it again without a change when its pass runs twice', async () => {
    expect(await backend.machines.release(connection(), request(), { log })).toEqual({ state: 'Released', ref: (await vm()).value });
  });

  it.each(['intruder', 'keep-1'])('refuses adoption by machine %s afterwards (NotOwned), and its deletion leaves the VM running', async (owner) => {
    const adoption = await adopt(owner).catch((e: unknown) => e);
    expect(isBackendError(adoption, 'NotOwned')).toBe(true);
    const deletion = await backend.machines.destroy(connection(), request(owner), { log }).catch((e: unknown) => e);
    expect(isBackendError(deletion, 'NotOwned')).toBe(true);
    expect((await client.vms.summary(await vm())).powerState).toBe('poweredOn');
  });

  it("refuses to release another machine's VM (NotOwned)", async () => {
    const error = await backend.machines.release(connection(), request('intruder'), { log }).catch((e: unknown) => e);
    expect(isBackendError(error, 'NotOwned')).toBe(true);
  });

  it('finds nothing to release when no VM has the UUID', async () => {
    expect(await backend.machines.release(connection(), { ...request(), uuid: randomUUID() }, { log })).toEqual({ state: 'Absent' });
  });
});
