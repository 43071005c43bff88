// The Proxmox backend (discovery, image rows, ProxmoxMachine passes) against
// the schema-held simulator, driven pass by pass as the machine reconciler
// drives it: every PVE task is started and returned InProgress, read on the
// next pass, never awaited. The integration suites do the same through the
// real API server; these pin the backend's own steps and its call count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Provider } from '../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ProxmoxMachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/proxmox-machine.js';
import type { Backend, Connection, EnsureResult, MachineRequest } from '../../../controller/backends/backend.js';
import { isBackendError } from '../../../controller/backends/backend-error.js';
import { ProxmoxClient } from '../../../controller/backends/proxmox/client/proxmox-client.js';
import { createProxmoxBackend } from '../../../controller/backends/proxmox/proxmox-backend.js';
import { silentLogger } from '../../../controller/runtime/log.js';
import { startProxmoxSim, type ProxmoxSim } from '../../sims/proxmox/proxmox-sim.js';
import { waitFor } from '../../support/wait.js';

let sim: ProxmoxSim;
let backend: Backend<ProxmoxMachineSpec>;
let connection: Connection;
const log = silentLogger();

beforeAll(async () => {
  sim = await startProxmoxSim({ taskDelayMs: 30 });
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
  await sim?.stop();
});

const provider: Provider = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'Provider',
  metadata: { name: 'lab', namespace: 'ns' },
  spec: {
    providerClassRef: { name: 'proxmox' },
    connection: { endpoint: 'https://x:8006', credentialsRef: { name: 'x' } },
    capabilities: {
      storageClasses: [{ name: 'fast', target: { storage: 'local-lvm' } }],
      networkClasses: [{ name: 'lan', target: { bridge: 'vmbr0', vlan: '20' } }],
    },
  },
};

let serial = 0;
function request(name: string, spec: Partial<ProxmoxMachineSpec> = {}, userData?: string): MachineRequest<ProxmoxMachineSpec> {
  serial += 1;
  const uuid = `0b5e7a10-0000-5000-8000-${String(serial).padStart(12, '0')}`;
  return {
    name,
    namespace: 'ns',
    uuid,
    providerID: `proxmox://${uuid}`,
    owner: { kind: 'ProxmoxMachine', namespace: 'ns', name },
    spec: {
      node: 'pve1',
      templateVmid: 9000,
      storage: 'local-lvm',
      cores: 2,
      memoryMiB: 1024,
      osDiskSizeGiB: 20,
      nics: [{ name: 'eth0', bridge: 'vmbr0', vlan: 20 }],
      isoStorage: 'local',
      ...spec,
    },
    raw: { node: 'pve1' },
    userData,
  };
}

interface Drive {
  readonly result: EnsureResult;
  readonly passes: number;
  readonly taskRef?: string;
}

/** Passes as the reconciler makes them until the VM is Present (or Absent), carrying taskRef and provisioned between them. */
async function drive(
  req: MachineRequest<ProxmoxMachineSpec>,
  state: { provisioned: boolean; taskRef?: string; specChanged?: boolean },
  maxPasses = 60,
): Promise<Drive> {
  let last: EnsureResult | undefined;
  for (let passes = 1; passes <= maxPasses; passes += 1) {
    const result = await backend.machines.ensure(
      connection,
      { ...req, ...(state.taskRef ? { taskRef: state.taskRef } : {}) },
      {
        mayCreate: !state.provisioned,
        firstBoot: !state.provisioned,
        specChanged: state.specChanged ?? !state.provisioned,
        log,
      },
    );
    last = result;
    if (result.state === 'InProgress') {
      state.taskRef = result.taskRef;
      await taskEnd(result.taskRef);
      continue;
    }
    delete state.taskRef;
    if (result.state === 'Present') {
      state.provisioned = true;
      if (result.observation.addresses.length === 0 && result.observation.powerState === 'PoweredOn' && passes < maxPasses) continue;
    }
    return { result, passes };
  }
  throw new Error(`${req.name}: not settled in ${maxPasses} passes: ${JSON.stringify(last)}`);
}

/** Until the simulated task of `taskRef` has stopped (the reconciler would come back after taskPollMs). */
async function taskEnd(taskRef: string): Promise<void> {
  const upid = taskRef.split(' ')[1] ?? '';
  await waitFor('the task to end', () => !sim.tasks.byUpid.has(upid) || sim.tasks.byUpid.get(upid)?.status === 'stopped', 10_000);
}

function vmOf(uuid: string): ReturnType<ProxmoxSim['state']['vms']['get']> {
  return [...sim.state.vms.values()].find((vm) => String(vm.config.smbios1 ?? '').includes(uuid));
}

describe('Proxmox backend: discovery and image rows', () => {
  it('publishes one failure domain per online node, and drops a node that goes offline', async () => {
    const fds = (await backend.discover(provider, connection)).failureDomains;
    expect(fds.map((fd) => fd.name)).toEqual(['lab-pve1', 'lab-pve2', 'lab-pve3']);
    expect(fds[0]?.attributes).toMatchObject({
      availableStorageClasses: ['fast'],
      availableNetworkClasses: ['lan'],
      raw: { node: 'pve1', datacenter: 'banlieue-sim', isoStorage: 'local', 'vlan.lan': '20' },
    });
    sim.state.setNodeOnline('pve3', false);
    try {
      expect((await backend.discover(provider, connection)).failureDomains.map((fd) => fd.name)).toEqual(['lab-pve1', 'lab-pve2']);
    } finally {
      sim.state.setNodeOnline('pve3', true);
    }
  });

  it('resolves a template VMID and refuses a VM that is not one', async () => {
    expect(await backend.resolveImage(provider, connection, { providerClass: 'proxmox', kind: 'Template', ref: '9000' })).toMatchObject({
      ready: true,
      resolvedRef: '9000',
    });
    expect(await backend.resolveImage(provider, connection, { providerClass: 'proxmox', kind: 'Template', ref: '4242' })).toMatchObject({
      ready: false,
      reason: 'ImageSourceNotFound',
    });
  });
});

describe('Proxmox backend: ProxmoxMachine passes', () => {
  it('clones, seeds, configures, grows and starts the VM in separate passes, and reports the agent address', async () => {
    const req = request('web-1', {}, '#cloud-config\nhostname: web-1\n');
    const state = { provisioned: false };
    const { result, passes } = await drive(req, state);
    if (result.state !== 'Present') throw new Error(result.state);
    const vm = vmOf(req.uuid);
    expect(vm).toBeDefined();
    expect(result.observation).toMatchObject({ powerState: 'PoweredOn', ref: `pve1/${vm?.vmid}`, statusFields: { node: 'pve1', addressSource: 'guestAgent' } });
    expect(result.observation.addresses[0]?.address).toMatch(/^10\.0\./);
    expect(vm?.config).toMatchObject({
      cores: 2,
      memory: '1024',
      tags: 'banlieue.proxmoxmachine.ns.web-1',
      ide2: `local:iso/banlieue-${req.uuid}.iso,media=cdrom`,
    });
    expect(String(vm?.config.net0)).toMatch(/^virtio=bc:24:11:[0-9a-f:]{8},bridge=vmbr0,tag=20$/i);
    expect(String(vm?.config.scsi0)).toContain('size=20G');
    expect(String(vm?.config.description)).toContain('banlieue-owner: ProxmoxMachine/ns/web-1');
    expect(sim.state.volumes.has(`local:iso/banlieue-${req.uuid}.iso`)).toBe(true);
    expect(passes).toBeGreaterThan(4);
  });

  it('converges a spec change on a running VM: the disk at once, CPUs pending until the next cold start', async () => {
    const req = request('web-2');
    const state = { provisioned: false };
    await drive(req, state);
    const changed = { ...req, spec: { ...req.spec, cores: 4, osDiskSizeGiB: 30 } };
    const { result } = await drive(changed, { ...state, specChanged: true });
    if (result.state !== 'Present') throw new Error(result.state);
    expect(result.observation.pending).toMatch(/cores change applies at the VM's next power-off/);
    expect(String(vmOf(req.uuid)?.config.scsi0)).toContain('size=30G');
    // Off and on again: the pending CPUs are the VM's.
    await drive({ ...changed, spec: { ...changed.spec, desiredPowerState: 'PoweredOff' } }, { ...state, specChanged: true });
    const again = await drive(changed, { ...state, specChanged: true });
    if (again.result.state !== 'Present') throw new Error(again.result.state);
    expect(again.result.observation.pending).toBeUndefined();
    expect(vmOf(req.uuid)?.config.cores).toBe(4);
  });

  it('takes the next VMID when another writer takes the one /cluster/nextid offered', async () => {
    sim.state.stealNextIds = 2;
    const req = request('raced');
    await drive(req, { provisioned: false });
    expect(vmOf(req.uuid)).toBeDefined();
    expect([...sim.state.vms.values()].filter((vm) => String(vm.config.name).startsWith('intruder-'))).toHaveLength(2);
  });

  it('leaves a foreign VM alone that has the machine’s name, and refuses one that carries its UUID without its mark', async () => {
    const req = request('lookalike');
    const foreign = sim.state.addVm({ vmid: 700, node: 'pve1', name: 'lookalike' });
    await drive(req, { provisioned: false });
    expect(vmOf(req.uuid)?.vmid).not.toBe(700);
    expect(foreign.config.smbios1).not.toContain(req.uuid);

    const copied = request('copied');
    sim.state.addVm({ vmid: 701, node: 'pve1', name: 'copied', uuid: copied.uuid });
    const error = await drive(copied, { provisioned: false }).catch((e: unknown) => e);
    expect(isBackendError(error, 'NotOwned')).toBe(true);
  });

  it('takes a clone of its own not yet configured for its VM, by its description, after a restart lost the clone task', async () => {
    const req = request('restarted');
    const options = { mayCreate: true, firstBoot: true, specChanged: true, log };
    const clone = await backend.machines.ensure(connection, req, options);
    if (clone.state !== 'InProgress') throw new Error(clone.state);
    await taskEnd(clone.taskRef);
    // A provider started afresh: no taskRef in status (killed before writing it), nothing remembered.
    const restarted = createProxmoxBackend({});
    try {
      expect(await restarted.machines.ensure(connection, req, options)).toMatchObject({ state: 'InProgress', actions: ['Adopted'] });
    } finally {
      await restarted.close();
    }
    expect([...sim.state.vms.values()].filter((vm) => vm.config.name === 'restarted')).toHaveLength(1);
  });

  it('reports a provisioned machine’s VM gone when only PVE copies of it are left, one at its old VMID, and its deletion leaves them', async () => {
    const req = request('copied-away');
    await drive(req, { provisioned: false });
    const ours = vmOf(req.uuid);
    if (!ours) throw new Error('copied-away has no VM');
    // A PVE user clones the VM (its description and tag copied, a new smbios1 UUID), removes it, and clones the copy to its VMID.
    const user = ProxmoxClient.create({ endpoint: sim.url, caPem: sim.caPem, ...sim.token });
    try {
      const backupId = await user.cluster.nextId();
      await user.tasks.wait(await user.qemu.clone({ node: 'pve1', vmid: ours.vmid }, { newid: backupId, name: 'copied-away-backup' }), {
        initialPollMs: 10,
        maxPollMs: 50,
      });
      sim.state.destroyVm(ours.vmid);
      await user.tasks.wait(await user.qemu.clone({ node: 'pve1', vmid: backupId }, { newid: ours.vmid, name: 'copied-away' }), {
        initialPollMs: 10,
        maxPollMs: 50,
      });
    } finally {
      user.close();
    }
    const copies = [...sim.state.vms.values()].filter((vm) => String(vm.config.description).includes(req.uuid));
    expect(copies.map((vm) => String(vm.config.tags))).toEqual(['banlieue.proxmoxmachine.ns.copied-away', 'banlieue.proxmoxmachine.ns.copied-away']);
    const before = JSON.stringify(copies.map((vm) => [vm.status, vm.config]));

    expect(await backend.machines.ensure(connection, req, { mayCreate: false, firstBoot: false, specChanged: false, log })).toEqual({ state: 'Absent' });
    expect(await backend.machines.destroy(connection, req, { log })).toEqual({ state: 'Gone', existed: false });
    expect(JSON.stringify(copies.map((vm) => [vm.status, vm.config]))).toBe(before);
    expect(copies.every((vm) => sim.state.vms.get(vm.vmid) === vm)).toBe(true);
  });

  it('deletes the VM: stopped, destroyed with its disks and seed, verified gone', async () => {
    const req = request('doomed', {}, '#cloud-config\n');
    await drive(req, { provisioned: false });
    const vmid = vmOf(req.uuid)?.vmid;
    let passes = 0;
    for (;;) {
      passes += 1;
      const result = await backend.machines.destroy(connection, req, { log });
      if (result.state === 'Gone') {
        expect(result.existed).toBe(true);
        break;
      }
      await waitFor('the deletion task to end', () => sim.tasks.idle, 10_000);
    }
    expect(passes).toBeGreaterThan(2);
    expect(sim.state.vms.has(vmid ?? 0)).toBe(false);
    expect([...sim.state.volumes.values()].filter((v) => v.vmid === vmid)).toEqual([]);
    // Its seed ISO's deletion is started, not waited for.
    await waitFor('the seed ISO to be gone', () => !sim.state.volumes.has(`local:iso/banlieue-${req.uuid}.iso`), 10_000);
  });

  it('records no schema violation over the whole run', () => {
    expect(sim.violations).toEqual([]);
  });
});
