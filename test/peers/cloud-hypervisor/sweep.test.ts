// The Cloud Hypervisor sweep (Backend.sweep) against the simulator: it
// finishes a deletion that began on the host (the tombstone destroy writes
// first) when the machine is gone and its VMM dead, and leaves the directory,
// disk and taps of a machine that is gone without a deletion having begun
// (`clusterctl move`, a finalizer removed by hand), saying so once.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { Backend, MachineRequest, MarkJudgement } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import { findVmmProcess } from '../../../controller/backends/cloud-hypervisor/host-process.js';
import { tapName } from '../../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { readPidFile, vmmPaths } from '../../../controller/backends/cloud-hypervisor/state-dir.js';
import type { MachineOwner } from '../../../controller/backends/ownership.js';
import { newLogger, silentLogger } from '../../../controller/runtime/log.js';
import { chProvider, createTestHost, type TestHost } from '../../support/cloud-hypervisor/host.js';
import { waitFor } from '../../support/wait.js';
import { chMachineRequest } from './machine-request.js';
import { simulatorPeer } from './vmm-peers.js';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';

const connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };
const DELETING = '5d0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a01';
const MOVED = '5d0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a02';

describe('Cloud Hypervisor sweep (simulated VMM)', () => {
  let host: TestHost;
  let backend: Backend<CloudHypervisorMachineSpec>;
  let raw: Record<string, string>;
  /** The machines the role's cache no longer holds. */
  const gone = new Set<string>();
  const judge = (owner: MachineOwner): MarkJudgement => (owner.namespace !== 'ns' ? 'Foreign' : gone.has(owner.name) ? 'Orphaned' : 'Owned');
  const lines: string[] = [];
  const log = newLogger({
    role: 'test',
    level: 'warn',
    destination: new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
  });

  beforeAll(async () => {
    host = await createTestHost(simulatorPeer);
    backend = cloudHypervisorBackend(host.config);
    raw = (await backend.discover(chProvider('ns', host) as unknown as Provider, connection)).failureDomains[0]?.attributes?.raw ?? {};
  });

  afterAll(async () => {
    await host.remove();
  });

  const request = (name: string, uuid: string): MachineRequest<CloudHypervisorMachineSpec> => chMachineRequest({ uuid, name, raw, address: '10.77.0.20' });
  const diskDir = (uuid: string): string => join(host.config.storageClasses.fast ?? '', uuid);

  /** Creates and boots the machine's VM, then kills its VMM (a host crash, or a VMM that died with its provider). */
  async function runThenKill(name: string, uuid: string, beforeKill?: () => Promise<void>): Promise<void> {
    const created = await backend.machines.ensure(connection, request(name, uuid), {
      mayCreate: true,
      firstBoot: true,
      specChanged: false,
      log: silentLogger(),
    });
    expect(created).toMatchObject({ state: 'Present', observation: { powerState: 'PoweredOn' } });
    await beforeKill?.();
    const paths = vmmPaths(host.config.stateRoot, uuid);
    const pid = await readPidFile(paths);
    if (pid === undefined) throw new Error(`no pidfile for ${uuid}`);
    process.kill(pid, 'SIGKILL');
    await waitFor('the VMM to die', async () => ((await findVmmProcess(pid, paths.apiSocket)) ? undefined : true), 30_000);
  }

  it('finishes a deletion a crash cut short once its machine is gone and its VMM dead', async () => {
    await runThenKill('deleting', DELETING, async () => {
      // The deletion's first pass: the power button pressed, the guest given its grace period.
      expect(await backend.machines.destroy(connection, request('deleting', DELETING), { log: silentLogger() })).toMatchObject({ state: 'InProgress' });
    });
    gone.add('deleting');

    await backend.sweep?.(judge, log);

    expect(existsSync(vmmPaths(host.config.stateRoot, DELETING).dir)).toBe(false);
    expect(existsSync(diskDir(DELETING))).toBe(false);
    expect(await host.links()).not.toContain(tapName(DELETING, 0));
  });

  it('leaves the directory, disk and taps of a machine gone without a deletion (moved, or its finalizer removed by hand), and says so once', async () => {
    await runThenKill('moved', MOVED);
    gone.add('moved');

    await backend.sweep?.(judge, log);
    await backend.sweep?.(judge, log);

    expect(existsSync(join(vmmPaths(host.config.stateRoot, MOVED).dir, 'machine.json'))).toBe(true);
    expect(existsSync(join(diskDir(MOVED), 'os.qcow2'))).toBe(true);
    expect(await host.links()).toContain(tapName(MOVED, 0));
    const warnings = lines.map((line) => JSON.parse(line) as { uuid?: string; msg: string }).filter((entry) => entry.uuid === MOVED);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: expect.stringMatching(/^Leaving the directory, disk and taps of a machine that no longer exists: its deletion never began/) as unknown,
      }),
    ]);
  });
});
