// Releasing a CloudHypervisorMachine's VM (spec.deletionPolicy Retain) against
// the simulator and, with CLOUD_HYPERVISOR_BIN as root, the real VMM: the VMM
// runs on with the same process, its disk, seed and tap stay, the machine
// record loses its mark (the mark it had kept as releasedFrom), and from then
// on no machine adopts, restarts or destroys it and no sweep removes it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import type { Backend, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import { findVmmProcess } from '../../../controller/backends/cloud-hypervisor/host-process.js';
import { readRecord } from '../../../controller/backends/cloud-hypervisor/machine/machine-record.js';
import { tapName } from '../../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { readPidFile, vmmPaths } from '../../../controller/backends/cloud-hypervisor/state-dir.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { chProvider, createTestHost, type TestHost } from '../../support/cloud-hypervisor/host.js';
import { waitFor } from '../../support/wait.js';
import { chMachineRequest } from './machine-request.js';
import { skipsRealVmm, VMM_PEERS } from './vmm-peers.js';

skipsRealVmm('Cloud Hypervisor release');

const UUID = '6e1d2c3b-4a5f-4e6d-9c8b-7a6f5e4d3c01';
const log = silentLogger();
const connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };

for (const peer of VMM_PEERS)
  describe.skipIf(!peer.available)(`releasing a Cloud Hypervisor VM (deletionPolicy Retain) with ${peer.name}`, () => {
    let host: TestHost;
    let backend: Backend<CloudHypervisorMachineSpec>;
    let raw: Record<string, string>;
    let pid: number | undefined;

    beforeAll(async () => {
      host = await createTestHost(peer);
      backend = cloudHypervisorBackend(host.config);
      raw = (await backend.discover(chProvider('ns', host) as unknown as Provider, connection)).failureDomains[0]?.attributes?.raw ?? {};
    });

    afterAll(async () => {
      const violations = host.violations();
      await host.remove();
      expect(violations).toEqual([]);
    });

    const request = (owner = 'keep-1', uuid = UUID): MachineRequest<CloudHypervisorMachineSpec> =>
      chMachineRequest({ uuid, name: 'keep-1', owner, raw, address: '10.77.0.30', spec: { deletionPolicy: 'Retain' } });
    /** A pass of `owner`'s machine: on its first boot it may create and adopts only with its mark; afterwards it restarts a dead VMM. */
    const pass = (owner: string, firstBoot: boolean): Promise<EnsureResult> =>
      backend.machines.ensure(connection, request(owner), { mayCreate: firstBoot && owner === 'keep-1', firstBoot, specChanged: false, log });
    const paths = (): ReturnType<typeof vmmPaths> => vmmPaths(host.config.stateRoot, UUID);
    const vmState = async (): Promise<string | undefined> => (await new VmmClient({ socketPath: paths().apiSocket }).findVm())?.state;
    const diskDir = (): string => join(host.config.storageClasses.fast ?? '', UUID);

    it('creates and boots the VM', async () => {
      expect(await pass('keep-1', true)).toMatchObject({ state: 'Present', observation: { powerState: 'PoweredOn' } });
      expect((await readRecord(paths()))?.owner).toBe('CloudHypervisorMachine/ns/keep-1');
      pid = await readPidFile(paths());
    });

    it('leaves the VMM running as it was, disk, seed and tap in place, and the record without its mark', async () => {
      expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: paths().dir });

      expect(await readPidFile(paths())).toBe(pid);
      expect(await findVmmProcess(pid, paths().apiSocket)).toBeDefined();
      expect(await vmState()).toBe('Running');
      expect(existsSync(join(diskDir(), 'os.qcow2'))).toBe(true);
      expect(existsSync(join(paths().dir, 'seed.iso'))).toBe(true);
      expect(await host.links()).toContain(tapName(UUID, 0));
      const record = await readRecord(paths());
      expect(record?.owner).toBeUndefined();
      expect(record?.releasedFrom).toBe('CloudHypervisorMachine/ns/keep-1');
    });

    it('releases it again without a change when its pass runs twice', async () => {
      const record = await readRecord(paths());
      expect(await backend.machines.release(connection, request(), { log })).toEqual({ state: 'Released', ref: paths().dir });
      expect(await readRecord(paths())).toEqual(record);
    });

    it.each(['intruder', 'keep-1'])('refuses adoption by machine %s afterwards (NotOwned), and its deletion leaves the VM running', async (owner) => {
      const adoption = await pass(owner, true).catch((e: unknown) => e);
      expect(isBackendError(adoption, 'NotOwned')).toBe(true);
      const deletion = await backend.machines.destroy(connection, request(owner), { log }).catch((e: unknown) => e);
      expect(isBackendError(deletion, 'NotOwned')).toBe(true);
      expect(await vmState()).toBe('Running');
      expect(await readPidFile(paths())).toBe(pid);
    });

    it("refuses to release another machine's VM (NotOwned)", async () => {
      const error = await backend.machines.release(connection, request('intruder'), { log }).catch((e: unknown) => e);
      expect(isBackendError(error, 'NotOwned')).toBe(true);
    });

    it('is left by the sweep, whatever the role thinks of the machines', async () => {
      await backend.sweep?.(() => 'Orphaned', log);
      expect(existsSync(join(paths().dir, 'machine.json'))).toBe(true);
      expect(existsSync(join(diskDir(), 'os.qcow2'))).toBe(true);
    });

    it('is not started again when its VMM dies: no pass restarts a VMM its record does not mark', async () => {
      if (pid === undefined) throw new Error('no pidfile');
      process.kill(pid, 'SIGKILL');
      await waitFor('the VMM to die', async () => ((await findVmmProcess(pid, paths().apiSocket)) ? undefined : true), 30_000);
      const restart = await pass('keep-1', false).catch((e: unknown) => e);
      expect(isBackendError(restart, 'NotOwned')).toBe(true);
      // No VMM was started: none runs for the directory's socket.
      expect(await findVmmProcess(await readPidFile(paths()), paths().apiSocket)).toBeUndefined();
    });

    it('finds nothing to release when no directory has the UUID', async () => {
      expect(await backend.machines.release(connection, request('keep-1', '6e1d2c3b-4a5f-4e6d-9c8b-7a6f5e4d3c02'), { log })).toEqual({ state: 'Absent' });
    });
  });
