// On this host, against the simulator and, with CLOUD_HYPERVISOR_BIN as root, the real VMM:
// a VM whose machine record does not carry a machine's mark is never written to, powered,
// resized or destroyed by that machine (test/peers/not-owned.ts): its record, VMM, disk and
// seed stay as they are. The only task a Cloud Hypervisor pass names in status.taskRef is a
// power-off waiting for its guest, remembered on the host, not in status: a taskRef naming
// one of the victim's is one a status may carry all the same.
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { CloudHypervisorMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/cloud-hypervisor-machine.js';
import type { Backend, Connection } from '../../../controller/backends/backend.js';
import { cloudHypervisorBackend } from '../../../controller/backends/cloud-hypervisor/ch-backend.js';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import { readRecord, writeRecord } from '../../../controller/backends/cloud-hypervisor/machine/machine-record.js';
import { powerButtonTaskRef } from '../../../controller/backends/cloud-hypervisor/machine/power.js';
import { readPidFile, vmmPaths } from '../../../controller/backends/cloud-hypervisor/state-dir.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { chProvider, createTestHost, type TestHost } from '../../support/cloud-hypervisor/host.js';
import { describeNotOwned, untilPresent, type NotOwnedWorld, type Victim } from '../not-owned.js';
import { chMachineRequest } from './machine-request.js';
import { skipsRealVmm, VMM_PEERS } from './vmm-peers.js';

skipsRealVmm('Cloud Hypervisor machines not their own');

const log = silentLogger();
const connection: Connection = { endpoint: '', credentials: {}, insecureSkipTLSVerify: false };

for (const peer of VMM_PEERS)
  describe.skipIf(!peer.available)(`with ${peer.name}`, () => {
    let host: TestHost;
    let world: NotOwnedWorld<CloudHypervisorMachineSpec>;
    let addresses = 40;

    /** A VM made and booted by machine `name`'s own pass. */
    async function victim(backend: Backend<CloudHypervisorMachineSpec>, raw: Record<string, string>, name: string): Promise<Victim> {
      const uuid = randomUUID();
      const request = chMachineRequest({ uuid, name, raw, address: `10.77.0.${(addresses += 1)}` });
      const made = await untilPresent(() => backend.machines.ensure(connection, request, { mayCreate: true, firstBoot: true, specChanged: false, log }));
      return { uuid, ref: made.ref, taskRef: powerButtonTaskRef(new Date()) };
    }

    beforeAll(async () => {
      host = await createTestHost(peer);
      const backend = cloudHypervisorBackend(host.config);
      const raw = (await backend.discover(chProvider('ns', host) as unknown as Provider, connection)).failureDomains[0]?.attributes?.raw ?? {};
      const unmarked = await victim(backend, raw, 'victim-a');
      const paths = vmmPaths(host.config.stateRoot, unmarked.uuid);
      const record = await readRecord(paths);
      if (!record) throw new Error('the victim has no record');
      // A directory banlieue did not make for a machine has a record without a mark.
      const { owner: _mark, ...unmarkedRecord } = record;
      await writeRecord(paths, unmarkedRecord);
      world = {
        backend,
        connection,
        victims: { 'carries no mark': unmarked, "carries another machine's mark": await victim(backend, raw, 'victim-b') },
        intruder: (uuid, taskRef) => ({
          ...chMachineRequest({
            uuid,
            name: 'intruder',
            raw,
            address: `10.77.0.${(addresses += 1)}`,
            spec: { cpus: { boot: 2 }, memory: { sizeMiB: 256 }, osDiskSizeGiB: 2, desiredPowerState: 'PoweredOff' },
            userData: '#cloud-config\nhostname: intruder\n',
          }),
          ...(taskRef ? { taskRef } : {}),
        }),
        freshUuid: () => randomUUID(),
        snapshot: async ({ uuid }) => {
          const dir = vmmPaths(host.config.stateRoot, uuid);
          const record = await readRecord(dir).catch(() => 'unreadable');
          if (record === undefined) return 'destroyed';
          const vm = await new VmmClient({ socketPath: dir.apiSocket }).findVm().catch(() => undefined);
          const mtime = async (path: string): Promise<number | undefined> => (await stat(path).catch(() => undefined))?.mtimeMs;
          return {
            record,
            pid: await readPidFile(dir),
            vm: vm && { state: vm.state, cpus: vm.config.cpus, memory: vm.config.memory },
            seed: await mtime(join(dir.dir, 'seed.iso')),
            powerButton: await mtime(join(dir.dir, 'power-button')),
            disk: await mtime(join(host.config.storageClasses.fast ?? '', uuid, 'os.qcow2')),
          };
        },
      };
    }, 120_000);

    afterAll(async () => {
      const violations = host.violations();
      await host.remove();
      expect(violations).toEqual([]);
    });

    describeNotOwned('Cloud Hypervisor', () => world);
  });
