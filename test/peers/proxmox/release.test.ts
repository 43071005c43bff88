// Releasing a ProxmoxMachine's VM (spec.deletionPolicy Retain) against the
// schema-held simulator: the VM stays running with its disks, its owner tag and
// description owner line gone (the mark it had kept as a released-from line),
// and from then on no machine adopts or destroys it, not even the one that
// made it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import type { Backend, Connection, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import { marksOf, ownerTag, parseTags } from '../../../controller/backends/proxmox/machine/vm-marks.js';
import { createProxmoxBackend } from '../../../controller/backends/proxmox/proxmox-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';
import type { SimVm } from '../../sims/proxmox/sim-state.js';
import { waitFor } from '../../support/wait.js';

const log = silentLogger();
const UUID = '0b5e7a10-0000-5000-8000-00000000aaaa';

let sim: ProxmoxSim;
let backend: Backend<ProxmoxMachineSpec>;
let connection: Connection;

beforeAll(async () => {
  // A clone runs 3 s, so a release finds it running; the other tasks are quick.
  sim = await startProxmoxSim({ taskDelayMs: { qmclone: 3_000, default: 30 } });
  connection = {
    endpoint: sim.url,
    credentials: { tokenID: sim.token.tokenID, tokenSecret: sim.token.tokenSecret },
    caPem: sim.caPem,
    insecureSkipTLSVerify: false,
  };
  backend = createProxmoxBackend({});
});

afterAll(async () => {
  await backend?.close();
  const violations = sim?.violations ?? [];
  await sim?.stop();
  // Every request the release made is one PVE's schema takes.
  expect(violations).toEqual([]);
});

const request = (name = 'keep-1', uuid = UUID): MachineRequest<ProxmoxMachineSpec> => ({
  name: 'keep-1',
  namespace: 'ns',
  uuid,
  providerID: `proxmox://${uuid}`,
  owner: { kind: 'ProxmoxMachine', namespace: 'ns', name },
  spec: {
    node: 'pve1',
    templateVmid: 9000,
    storage: 'local-lvm',
    cores: 1,
    memoryMiB: 512,
    osDiskSizeGiB: 10,
    nics: [{ name: 'eth0', bridge: 'vmbr0' }],
    deletionPolicy: 'Retain',
  },
  raw: { node: 'pve1' },
  userData: undefined,
});

/** A first-boot pass of `owner`'s machine, carrying the task an earlier pass started: it may create, and adopts only with its mark. */
const adopt = (owner: string, taskRef?: string): Promise<EnsureResult> =>
  backend.machines.ensure(
    connection,
    { ...request(owner), ...(taskRef ? { taskRef } : {}) },
    { mayCreate: owner === 'keep-1', firstBoot: true, specChanged: true, log },
  );

function vm(): SimVm {
  const found = [...sim.state.vms.values()].find((v) => String(v.config.smbios1 ?? '').includes(UUID));
  if (!found) throw new Error(`no VM with UUID ${UUID} in the simulator`);
  return found;
}

/** The VM's disk and CD-ROM keys with their volumes. */
const disksOf = (v: SimVm): string[] =>
  Object.keys(v.config)
    .filter((key) => /^(scsi|virtio|sata|ide)\d+$/.test(key))
    .map((key) => `${key}=${String(v.config[key])}`);

describe('releasing a Proxmox VM (deletionPolicy Retain)', () => {
  let disks: string[];

  it('waits out a clone still running, as a deletion does', async () => {
    const started = await adopt('keep-1');
    if (started.state !== 'InProgress') throw new Error(`expected a clone to start, got ${started.state}`);
    expect(await backend.machines.release(connection, { ...request(), taskRef: started.taskRef }, { log })).toEqual({
      state: 'InProgress',
      message: expect.stringMatching(/^waiting for clone task of VM \d+ on pve1 to end before releasing the VM$/) as unknown,
    });
    let taskRef: string | undefined = started.taskRef;
    await waitFor(
      'the VM to be configured and running',
      async () => {
        const pass = await adopt('keep-1', taskRef);
        taskRef = pass.state === 'InProgress' ? pass.taskRef : undefined;
        return pass.state === 'Present' && pass.observation.powerState === 'PoweredOn';
      },
      60_000,
    );
    expect(marksOf(String(vm().config.description))).toEqual({ owner: 'ProxmoxMachine/ns/keep-1', releasedFrom: undefined });
    expect(parseTags(String(vm().config.tags))).toContain(ownerTag(request().owner));
    disks = disksOf(vm());
  });

  it('leaves the VM running with its disks and UUID, without its owner tag and owner line', async () => {
    const { vmid } = vm();

    expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: `pve1/${vmid}` });

    const after = vm();
    expect(after.vmid).toBe(vmid);
    expect(after.status).toBe('running');
    expect(disksOf(after)).toEqual(disks);
    expect(String(after.config.smbios1)).toContain(`uuid=${UUID}`);
    expect(marksOf(String(after.config.description))).toEqual({ owner: undefined, releasedFrom: 'ProxmoxMachine/ns/keep-1' });
    expect(after.config.tags).toBeUndefined();
  });

  it('releases it again without a change when its pass runs twice', async () => {
    const config = { ...vm().config };
    expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: `pve1/${vm().vmid}` });
    expect(vm().config).toEqual(config);
  });

  it.each(['intruder', 'keep-1'])('refuses adoption by machine %s afterwards (NotOwned), and its deletion leaves the VM running', async (owner) => {
    const adoption = await adopt(owner).catch((e: unknown) => e);
    expect(isBackendError(adoption, 'NotOwned')).toBe(true);
    const deletion = await backend.machines.destroy(connection, request(owner), { log }).catch((e: unknown) => e);
    expect(isBackendError(deletion, 'NotOwned')).toBe(true);
    expect(vm().status).toBe('running');
  });

  it("refuses to release another machine's VM (NotOwned)", async () => {
    const error = await backend.machines.release(connection, request('intruder'), { log }).catch((e: unknown) => e);
    expect(isBackendError(error, 'NotOwned')).toBe(true);
  });

  it('finds nothing to release when no VM has the UUID', async () => {
    expect(await backend.machines.release(connection, request('keep-1', '0b5e7a10-0000-5000-8000-00000000bbbb'), { log })).toEqual({ state: 'Absent' });
  });
});
