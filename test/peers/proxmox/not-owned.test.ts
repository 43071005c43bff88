// On the Proxmox simulator: a VM found by a machine's smbios1 UUID without that machine's
// owner line is never written to, powered, resized or destroyed (test/peers/not-owned.ts),
// also when the machine's status.taskRef names the clone task that made it. Besides the VM's
// config and power, no request that would change it (anything but a GET naming its VMID) may
// reach the simulator.
import { afterAll, beforeAll, expect } from 'vitest';
import type { ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { Backend, Connection, MachineRequest } from '../../../controller/backends/backend.js';
import { createProxmoxBackend } from '../../../controller/backends/proxmox/proxmox-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';
import { waitFor } from '../../support/wait.js';
import { describeNotOwned, untilPresent, type NotOwnedWorld, type Victim } from '../not-owned.js';

const log = silentLogger();

let sim: ProxmoxSim;
let world: NotOwnedWorld<ProxmoxMachineSpec>;
let uuids = 0;

/** A UUID of this suite, never one the simulator's own VMs have. */
const nextUuid = (): string => `0b5e7a10-0000-5000-8000-${String((uuids += 1)).padStart(12, '0')}`;

const spec = (change: Partial<ProxmoxMachineSpec> = {}): ProxmoxMachineSpec => ({
  node: 'pve1',
  templateVmid: 9000,
  storage: 'local-lvm',
  cores: 1,
  memoryMiB: 512,
  osDiskSizeGiB: 10,
  nics: [{ name: 'eth0', bridge: 'vmbr0' }],
  ...change,
});

function request(name: string, uuid: string, change: Partial<ProxmoxMachineSpec> = {}): MachineRequest<ProxmoxMachineSpec> {
  return {
    name,
    namespace: 'ns',
    uuid,
    providerID: `proxmox://${uuid}`,
    owner: { kind: 'ProxmoxMachine', namespace: 'ns', name },
    spec: spec(change),
    raw: { node: 'pve1' },
    userData: undefined,
  };
}

/** A VM made, configured and started by machine `name`'s own passes. */
async function victim(backend: Backend<ProxmoxMachineSpec>, connection: Connection, name: string): Promise<Victim> {
  const uuid = nextUuid();
  const made = await untilPresent((taskRef) =>
    backend.machines.ensure(
      connection,
      { ...request(name, uuid), ...(taskRef ? { taskRef } : {}) },
      { mayCreate: true, firstBoot: true, specChanged: false, log },
    ),
  );
  const [clone] = made.taskRefs;
  if (clone === undefined) throw new Error('no clone task was started');
  return { uuid, ref: made.ref, taskRef: clone };
}

const vmidOf = (victim: Victim): number => Number(victim.ref.split('/')[1]);

/** Requests that could change VM `vmid`: every method but GET on a path naming it. */
const writesTo = (vmid: number): number => sim.requests.filter((r) => r.method !== 'GET' && new RegExp(`/qemu/${vmid}(/|$)`).test(r.path)).length;

beforeAll(async () => {
  sim = await startProxmoxSim({ taskDelayMs: { default: 20 } });
  const connection: Connection = {
    endpoint: sim.url,
    credentials: { tokenID: sim.token.tokenID, tokenSecret: sim.token.tokenSecret },
    caPem: sim.caPem,
    insecureSkipTLSVerify: false,
  };
  const backend = createProxmoxBackend({});
  const unmarked = await victim(backend, connection, 'victim-a');
  const config = sim.state.vms.get(vmidOf(unmarked))?.config;
  if (!config) throw new Error('the victim VM is not in the simulator');
  // What a VM banlieue did not make carries: its own description, no tag of ours.
  config.description = 'made by hand';
  delete config.tags;
  world = {
    backend,
    connection,
    victims: { 'carries no mark': unmarked, "carries another machine's mark": await victim(backend, connection, 'victim-b') },
    intruder: (uuid, taskRef) => ({
      ...request('intruder', uuid, { cores: 2, memoryMiB: 1024, osDiskSizeGiB: 20, desiredPowerState: 'PoweredOff' }),
      userData: '#cloud-config\nhostname: intruder\n',
      ...(taskRef ? { taskRef } : {}),
    }),
    freshUuid: nextUuid,
    snapshot: async (v) => {
      // What a pass started has ended before the VM is read.
      await waitFor('the simulator to run no task', () => sim.tasks.idle, 30_000);
      const vm = sim.state.vms.get(vmidOf(v));
      if (!vm) return 'destroyed';
      return { config: { ...vm.config }, pending: vm.pending, status: vm.status, qmpstatus: vm.qmpstatus, lock: vm.lock, writes: writesTo(vm.vmid) };
    },
  };
}, 120_000);

afterAll(async () => {
  await world?.backend.close();
  const violations = sim?.violations ?? [];
  await sim?.stop();
  // Every request the suite made is one PVE's schema takes.
  expect(violations).toEqual([]);
});

describeNotOwned('Proxmox', () => world);
