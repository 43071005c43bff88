// A provisioned VM whose backend lost it is reported, never re-created
// (docs/adr/0013-generic-machine-reconciler.md; docs/adr/0022-when-banlieue-destroys-a-vm.md,
// row 21). On a Cloud Hypervisor host a VM is its VMM and its OS disk: when
// both are gone (the disk removed by hand, then the VMM killed) while its
// record stays, starting a VMM again on a blank overlay of the image would be
// a new VM under the old one's identity, its data gone without anyone saying so.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findVmmProcess } from '../../controller/backends/cloud-hypervisor/host-process.js';
import { OS_DISK } from '../../controller/backends/cloud-hypervisor/machine/os-disk.js';
import { readPidFile, vmmPaths } from '../../controller/backends/cloud-hypervisor/state-dir.js';
import { chUuidOf, chVm, startChEnv, stopChEnv, type ChEnv } from '../support/cloud-hypervisor/env.js';
import { TestApi, machineRef, vm } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';

const t = new TestApi();

describe('a Cloud Hypervisor VM whose OS disk and VMM are gone (simulated VMM)', () => {
  let env: ChEnv;
  // Machines are read again every 2 s: what happened on the host shows soon.
  beforeAll(async () => {
    env = await startChEnv('ch-lost-disk', { providerFlags: ['--resync-period', '2'] });
  }, 180_000);
  afterAll(() => stopChEnv(env), 240_000);

  it('is reported, and no VMM is started again on a blank disk', async () => {
    await t.apply(chVm(env, 'lost-disk', '10.89.0.10'));
    await t.condition(vm(env.ns, 'lost-disk', '', ''), 'Ready', 'True', 'Reconciled', 120_000);
    const machine = await t.get(machineRef('cloud-hypervisor', env.ns, 'lost-disk'));
    const uuid = chUuidOf(machine?.spec?.providerID as string);
    const paths = vmmPaths(env.host.config.stateRoot, uuid);
    const disk = join(env.host.config.storageClasses.fast ?? '', uuid, OS_DISK);
    const pid = (await findVmmProcess(await readPidFile(paths), paths.apiSocket))?.pid;
    if (pid === undefined) throw new Error('lost-disk has no VMM');

    // An operator removes the disk, then the VMM goes.
    rmSync(disk);
    process.kill(pid, 'SIGKILL');
    await waitFor('the VMM to be gone', async () => ((await findVmmProcess(pid, paths.apiSocket)) ? undefined : true), 30_000);
    const passes = await env.provider.metric('banlieue_backend_calls_total', { backend: 'cloud-hypervisor', method: 'ensure' });
    await waitFor(
      'three more passes over the machines',
      async () =>
        (await env.provider.metric('banlieue_backend_calls_total', { backend: 'cloud-hypervisor', method: 'ensure' })) >= passes + 3 ? true : undefined,
      60_000,
    );

    expect(existsSync(disk)).toBe(false);
    expect(await findVmmProcess(await readPidFile(paths), paths.apiSocket)).toBeUndefined();
    const ready = (await t.get(machineRef('cloud-hypervisor', env.ns, 'lost-disk')))?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
    expect(ready?.status).toBe('False');
  }, 240_000);
});
