// On vcsim: a VM found by a machine's BIOS UUID without that machine's `banlieue.owner`
// is never written to, powered, resized or destroyed (test/peers/not-owned.ts), also when
// the machine's status.taskRef names the CloneVM_Task that made it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { VSphereMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/vsphere-machine.js';
import type { Backend, Connection, MachineRequest } from '../../../controller/backends/backend.js';
import type { VsphereClient } from '../../../controller/backends/vsphere/client/vsphere-client.js';
import { createVsphereBackend } from '../../../controller/backends/vsphere/vsphere-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { makeTemplate, vcsimClient } from '../../support/vsphere/world.js';
import { describeNotOwned, untilPresent, type NotOwnedWorld, type Victim } from '../not-owned.js';
import { startVcsim, type Vcsim } from './vcsim.js';

const log = silentLogger();
const TEMPLATE = 'not-owned-template';

let sim: Vcsim;
let client: VsphereClient;
let world: NotOwnedWorld<VSphereMachineSpec>;

const spec = (change: Partial<VSphereMachineSpec> = {}): VSphereMachineSpec => ({
  template: TEMPLATE,
  datacenter: 'DC0',
  cluster: 'DC0_C0',
  numCpus: 1,
  memoryMiB: 256,
  ...change,
});

function request(name: string, uuid: string, change: Partial<VSphereMachineSpec> = {}): MachineRequest<VSphereMachineSpec> {
  return {
    name,
    namespace: 'vms',
    uuid,
    providerID: `vsphere://${uuid}`,
    owner: { kind: 'VSphereMachine', namespace: 'vms', name },
    spec: spec(change),
    raw: {},
    userData: undefined,
  };
}

/** A VM made and powered on by machine `name`'s own passes. */
async function victim(backend: Backend<VSphereMachineSpec>, connection: Connection, name: string): Promise<Victim> {
  const uuid = randomUUID();
  const made = await untilPresent((taskRef) =>
    backend.machines.ensure(
      connection,
      { ...request(name, uuid), ...(taskRef ? { taskRef } : {}) },
      { mayCreate: true, firstBoot: true, specChanged: false, log },
    ),
  );
  const [clone] = made.taskRefs;
  if (clone === undefined) throw new Error('the clone ended within its first pass: no task to name');
  return { uuid, ref: made.ref, taskRef: clone };
}

beforeAll(async () => {
  // A clone runs 1 s, so every victim's first pass returns its task.
  sim = await startVcsim({ datacenters: 1, clusters: 1, methodDelayMs: { CloneVm: 1_000, LockHandoff: 0 } });
  client = await vcsimClient(sim);
  await makeTemplate(client, TEMPLATE);
  const backend = createVsphereBackend({});
  const connection: Connection = {
    endpoint: sim.url,
    credentials: { username: sim.username, password: sim.password },
    caPem: sim.caPem,
    insecureSkipTLSVerify: false,
  };
  const unmarked = await victim(backend, connection, 'victim-a');
  await client.vms.reconfigure({ type: 'VirtualMachine', value: unmarked.ref }, { extraConfig: { 'banlieue.owner': '' } });
  world = {
    backend,
    connection,
    victims: { 'carries no mark': unmarked, "carries another machine's mark": await victim(backend, connection, 'victim-b') },
    intruder: (uuid, taskRef) => ({
      ...request('intruder', uuid, { numCpus: 2, memoryMiB: 512, desiredPowerState: 'PoweredOff' }),
      userData: '#cloud-config\nhostname: intruder\n',
      ...(taskRef ? { taskRef } : {}),
    }),
    freshUuid: () => randomUUID(),
    snapshot: async ({ ref }) => {
      const vm = { type: 'VirtualMachine', value: ref };
      const found = (await client.vms.names((await client.inventory.datacenters())[0]?.vmFolder ?? vm)).some((v) => v.ref.value === ref);
      if (!found) return 'destroyed';
      const hardware = await client.vms.hardware(vm);
      return {
        power: (await client.vms.summary(vm)).powerState,
        cpus: hardware.numCPUs,
        memoryMB: hardware.memoryMB,
        disksKB: hardware.disks.map((d) => d.capacityKB),
        extraConfig: [...(await client.vms.extraConfig(vm)).entries()].sort(([a], [b]) => a.localeCompare(b)),
      };
    },
  };
}, 300_000);

afterAll(async () => {
  await world?.backend.close();
  await client?.close();
  await sim?.stop();
});

describeNotOwned('vSphere', () => world);
