// The Cloud Hypervisor backend (what `banlieue provider cloud-hypervisor` runs
// on a host) against the simulator and, with CLOUD_HYPERVISOR_BIN as root, the
// real cloud-hypervisor: discovery of the host, then a machine's whole life:
// created (record, qcow2 overlay, seed, taps in the test's own network
// namespace, VMM, vm.create, vm.boot), found again, powered off (power button,
// grace period, vm.shutdown, VMM stopped), on again from its saved config, its
// VMM killed behind its back and restarted, and deleted with nothing left.
// The VmConfig the backend builds is what the real VMM is asked to boot.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import type { Backend, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import { findVmmProcess } from '../../../controller/backends/cloud-hypervisor/host-process.js';
import { derivedMac, tapName } from '../../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { readPidFile, vmmPaths } from '../../../controller/backends/cloud-hypervisor/state-dir.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { chProvider, createTestHost, TEST_BRIDGE, type TestHost } from '../../support/cloud-hypervisor/host.js';
import { waitFor } from '../../support/wait.js';
import { chMachineRequest } from './machine-request.js';
import { skipsRealVmm, VMM_PEERS } from './vmm-peers.js';

skipsRealVmm('Cloud Hypervisor backend');

const UUID = '3b0e8f52-5a1c-4c7e-9d1a-2f6b7c8d9e01';
const log = silentLogger();
const connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };

for (const peer of VMM_PEERS)
  describe.skipIf(!peer.available)(`Cloud Hypervisor backend with ${peer.name}`, () => {
    let host: TestHost;
    let backend: Backend<CloudHypervisorMachineSpec>;
    let raw: Record<string, string>;

    beforeAll(async () => {
      host = await createTestHost(peer);
      backend = cloudHypervisorBackend(host.config);
    });

    afterAll(async () => {
      const violations = host.violations();
      await host.remove();
      expect(violations).toEqual([]);
    });

    const request = (extra: Partial<CloudHypervisorMachineSpec> = {}, owner = 'web-1'): MachineRequest<CloudHypervisorMachineSpec> =>
      chMachineRequest({ uuid: UUID, name: 'web-1', owner, raw, address: '10.77.0.10', spec: extra, userData: '#cloud-config\nhostname: web-1\n' });
    const ensure = (extra: Partial<CloudHypervisorMachineSpec> = {}, firstBoot = false): Promise<EnsureResult> =>
      backend.machines.ensure(connection, request(extra), { mayCreate: firstBoot, firstBoot, specChanged: false, log });
    const present = (result: EnsureResult): Extract<EnsureResult, { state: 'Present' }>['observation'] => {
      if (result.state !== 'Present') throw new Error(`expected Present, got ${JSON.stringify(result)}`);
      return result.observation;
    };
    const paths = (): ReturnType<typeof vmmPaths> => vmmPaths(host.config.stateRoot, UUID);
    const vmState = async (): Promise<string | undefined> => (await new VmmClient({ socketPath: paths().apiSocket }).findVm())?.state;

    it('discovers the host as one failure domain with its classes, capacity and host name', async () => {
      const provider = chProvider('ns', host) as unknown as Provider;
      const [domain, ...more] = (await backend.discover(provider, connection)).failureDomains;
      expect(more).toEqual([]);
      expect(domain).toMatchObject({
        name: 'host-a',
        labels: { name: 'host-a', host: 'testhost' },
        attributes: { availableStorageClasses: ['fast'], availableNetworkClasses: ['lan'] },
      });
      raw = domain?.attributes?.raw ?? {};
      expect(raw).toMatchObject({ host: 'testhost', 'storageClass.fast': 'fast', 'networkClass.lan': 'lan', nestedVirtualization: 'false' });
      expect(Number(raw.cpus)).toBeGreaterThan(0);
      expect(Number(raw.memoryMiB)).toBeGreaterThan(0);
    });

    it('withdraws the failure domain while the host is over its memory threshold, saying why (CapacityExceeded)', async () => {
      const full = cloudHypervisorBackend({ ...host.config, capacity: { ...host.config.capacity, maxMemoryUsedPercent: 1 } });
      expect(await full.discover(chProvider('ns', host) as unknown as Provider, connection)).toEqual({
        failureDomains: [],
        withdrawn: { reason: 'CapacityExceeded', message: expect.stringMatching(/^memory \d+% used, at or over capacity.maxMemoryUsedPercent 1$/) as unknown },
      });
    });

    it('refuses a Provider whose endpoint names another host', async () => {
      const provider = chProvider('ns', host) as unknown as Provider;
      const other = { ...provider, spec: { ...provider.spec, connection: { endpoint: `unix://elsewhere${host.config.stateRoot}` } } };
      await expect(backend.discover(other, connection)).rejects.toThrow(/names host elsewhere; this is testhost/);
    });

    it('creates and boots the VM: overlay disk, seed, tap on the bridge, the VMM running the VmConfig it built', async () => {
      const observation = present(await ensure({}, true));
      expect(observation.powerState).toBe('PoweredOn');
      expect(observation.actions).toEqual(['Created', 'GuestDataWritten', 'PoweredOn']);
      expect(observation.addresses).toEqual([{ type: 'InternalIP', address: '10.77.0.10' }]);
      expect(observation.statusFields).toEqual({ hostUid: 'testhost', addressSource: 'static' });
      expect(await vmState()).toBe('Running');
      const info = await new VmmClient({ socketPath: paths().apiSocket }).vmInfo();
      expect(info.config.platform?.system_uuid).toBe(UUID);
      expect(info.config.disks?.map((d) => d.id)).toEqual(['os', 'seed']);
      expect(existsSync(join(host.config.storageClasses.fast ?? '', UUID, 'os.qcow2'))).toBe(true);
      expect(existsSync(join(paths().dir, 'seed.iso'))).toBe(true);
      const tap = JSON.parse(await host.ip(['-json', '-details', 'link', 'show', 'dev', tapName(UUID, 0)])) as { master?: string }[];
      expect(tap[0]?.master).toBe(TEST_BRIDGE);
    });

    it('finds the running VM again and changes nothing', async () => {
      const pid = await readPidFile(paths());
      const observation = present(await ensure());
      expect(observation).toMatchObject({ powerState: 'PoweredOn', actions: [] });
      expect(await readPidFile(paths())).toBe(pid);
    });

    it('refuses to touch the VM for another machine carrying its UUID', async () => {
      const error = await backend.machines
        .ensure(connection, request({}, 'intruder'), { mayCreate: true, firstBoot: true, specChanged: false, log })
        .catch((e: unknown) => e);
      expect(isBackendError(error, 'NotOwned')).toBe(true);
    });

    it('powers off with the power button, then vm.shutdown once the grace period is over, and stops the VMM', async () => {
      const first = await ensure({ desiredPowerState: 'PoweredOff' });
      expect(first).toMatchObject({ state: 'InProgress', taskRef: expect.stringMatching(/^vm\.power-button@/) });
      const pid = await readPidFile(paths());
      const off = await waitFor(
        'the power-off to finish',
        async () => {
          const result = await ensure({ desiredPowerState: 'PoweredOff' });
          return result.state === 'Present' ? result.observation : undefined;
        },
        60_000,
      );
      expect(off).toMatchObject({ powerState: 'PoweredOff', actions: ['PoweredOff'], addresses: [] });
      expect(await findVmmProcess(pid, paths().apiSocket)).toBeUndefined();
      expect(present(await ensure({ desiredPowerState: 'PoweredOff' }))).toMatchObject({ powerState: 'PoweredOff', actions: [] });
    });

    it('powers on again from the saved config', async () => {
      expect(present(await ensure())).toMatchObject({ powerState: 'PoweredOn', actions: ['PoweredOn'] });
      expect(await vmState()).toBe('Running');
    });

    it('restarts a VMM killed behind its back and says so', async () => {
      const pid = await readPidFile(paths());
      if (pid === undefined) throw new Error('no pidfile');
      process.kill(pid, 'SIGKILL');
      await waitFor('the VMM to die', async () => ((await findVmmProcess(pid, paths().apiSocket)) ? undefined : true), 30_000);
      const observation = present(await ensure());
      expect(observation.powerState).toBe('PoweredOn');
      expect(observation.statusFields.lastVmmExit).toMatch(/exited without banlieue stopping it; started again/);
      expect(await readPidFile(paths())).not.toBe(pid);
    });

    it("reads a DHCP guest's address from the neighbour table, by the MAC derived from its UUID", async () => {
      const other = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
      const dhcp: MachineRequest<CloudHypervisorMachineSpec> = {
        ...request({ nics: [{ name: 'eth0', networkClass: 'lan' }] }),
        uuid: other,
        providerID: `cloudhypervisor://${other}`,
        owner: { kind: 'CloudHypervisorMachine', namespace: 'ns', name: 'dhcp-1' },
      };
      const pass = async (firstBoot: boolean): Promise<EnsureResult> =>
        backend.machines.ensure(connection, dhcp, { mayCreate: firstBoot, firstBoot, specChanged: false, log });
      expect(present(await pass(true))).toMatchObject({ powerState: 'PoweredOn', addresses: [], statusFields: { addressSource: 'neighbour' } });
      await host.ip(['neigh', 'add', '10.77.0.50', 'lladdr', derivedMac(other, 0), 'dev', TEST_BRIDGE, 'nud', 'reachable']);
      expect(present(await pass(false))).toMatchObject({
        addresses: [{ type: 'InternalIP', address: '10.77.0.50' }],
        statusFields: { addressSource: 'neighbour' },
      });
      await waitFor('dhcp-1 deleted', async () => ((await backend.machines.destroy(connection, dhcp, { log })).state === 'Gone' ? true : undefined), 60_000);
    });

    it('reports a provisioned VM whose OS disk and VMM are gone Absent, makes it no blank disk, and deletes what is left', async () => {
      const lost = '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b';
      const req: MachineRequest<CloudHypervisorMachineSpec> = {
        ...request(),
        uuid: lost,
        providerID: `cloudhypervisor://${lost}`,
        owner: { kind: 'CloudHypervisorMachine', namespace: 'ns', name: 'lost-1' },
      };
      const pass = (spec: Partial<CloudHypervisorMachineSpec> = {}, firstBoot = false): Promise<EnsureResult> =>
        backend.machines.ensure(connection, { ...req, spec: { ...req.spec, ...spec } }, { mayCreate: firstBoot, firstBoot, specChanged: false, log });
      expect(present(await pass({}, true)).powerState).toBe('PoweredOn');
      const lostPaths = vmmPaths(host.config.stateRoot, lost);
      const disk = join(host.config.storageClasses.fast ?? '', lost, 'os.qcow2');
      const pid = await readPidFile(lostPaths);
      if (pid === undefined) throw new Error('lost-1 has no VMM');
      // An operator removes the disk, then the VMM goes.
      rmSync(disk);
      process.kill(pid, 'SIGKILL');
      await waitFor('the VMM to die', async () => ((await findVmmProcess(pid, lostPaths.apiSocket)) ? undefined : true), 30_000);

      expect(await pass()).toEqual({ state: 'Absent' });
      expect(await pass({ desiredPowerState: 'PoweredOff' })).toEqual({ state: 'Absent' });
      expect(existsSync(disk)).toBe(false);
      expect(await findVmmProcess(await readPidFile(lostPaths), lostPaths.apiSocket)).toBeUndefined();
      const deleted = await waitFor(
        'lost-1 deleted',
        async () => {
          const result = await backend.machines.destroy(connection, req, { log });
          return result.state === 'Gone' ? result : undefined;
        },
        60_000,
      );
      expect(deleted).toEqual({ state: 'Gone', existed: true });
      expect(existsSync(lostPaths.dir)).toBe(false);
      expect(await host.links()).not.toContain(tapName(lost, 0));
    });

    it('deletes the VM: guest down, VMM gone, taps, disk and state directory removed', async () => {
      const pid = await readPidFile(paths());
      const deleted = await waitFor(
        'the deletion to finish',
        async () => {
          const result = await backend.machines.destroy(connection, request(), { log });
          return result.state === 'Gone' ? result : undefined;
        },
        60_000,
      );
      expect(deleted).toEqual({ state: 'Gone', existed: true });
      expect(await findVmmProcess(pid, paths().apiSocket)).toBeUndefined();
      expect(existsSync(paths().dir)).toBe(false);
      expect(existsSync(join(host.config.storageClasses.fast ?? '', UUID))).toBe(false);
      expect(await host.links()).not.toContain(tapName(UUID, 0));
      expect(await backend.machines.destroy(connection, request(), { log })).toEqual({ state: 'Gone', existed: false });
    });
  });
