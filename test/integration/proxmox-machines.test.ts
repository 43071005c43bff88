// VirtualMachines on Proxmox VE end to end: `banlieue controller` and `banlieue
// provider proxmox` as processes, the schema-held PVE simulator as the
// cluster (its tasks take a while, so nothing that waits on one in a worker
// would pass unseen), the real API server in between. The test plays the
// guest agent (the address it reports) and reads what users see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INFRA, TestApi, machineRef, vm, type Obj } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { eventsWhere, eventsWith } from '../support/events.js';
import { proxmoxWorld } from '../support/proxmox/world.js';
import { startProxmoxSim } from '../sims/proxmox/proxmox-sim.js';
import {
  proxmoxUuidOf,
  readyWithAgentAddress,
  simVmsNamed,
  simVmsWithUuid,
  startProxmoxEnv,
  startProxmoxProvider,
  stopProxmoxEnv,
  type ProxmoxEnv as Env,
} from '../support/proxmox/env.js';

const t = new TestApi();

const readyOf = (o: Obj | undefined): { status: string; reason: string; message: string } | undefined =>
  (o?.status?.conditions as { type: string; status: string; reason: string; message: string }[] | undefined)?.find((c) => c.type === 'Ready');

describe('VirtualMachines on Proxmox VE (simulator)', () => {
  let env: Env;
  const userData = '#cloud-config\nhostname: ${VM_NAME}\n';

  beforeAll(async () => {
    // Resynced every 2 s: a node going offline shows on converged machines.
    env = await startProxmoxEnv('pve-vm', { providerFlags: ['--resync-period', '2'] });
  }, 180_000);
  afterAll(async () => {
    // Whatever happened, every node is back before the VMs are deleted.
    for (const node of env?.sim.state.nodes.values() ?? []) node.online = true;
    await stopProxmoxEnv(env);
  }, 300_000);

  const create = (name: string, extra: Record<string, unknown> = {}): Promise<Obj> =>
    t.apply(vm(env.ns, name, env.world.vmClass.metadata.name, env.world.vmImage.metadata.name, extra));

  it('provisions a VirtualMachine: a VM cloned with its UUID, mark and shape, Ready with the address its agent reports', async () => {
    await t.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'web-user-data', namespace: env.ns }, stringData: { 'user-data': userData } });
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } } });
    const ready = await readyWithAgentAddress(env, 'web-1', '10.20.0.11');
    expect(ready.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.20.0.11' }]);
    expect(ready.status?.observedPowerState).toBe('PoweredOn');

    const machine = await t.get(machineRef('proxmox', env.ns, 'web-1'));
    const uuid = await proxmoxUuidOf(env.ns, 'web-1');
    expect(machine?.spec?.providerID).toBe(`proxmox://${uuid}`);
    const [found, ...others] = simVmsWithUuid(env.sim, uuid);
    expect(others).toEqual([]);
    expect(machine?.status).toMatchObject({
      initialization: { provisioned: true },
      node: found?.node,
      addressSource: 'guestAgent',
      failureDomain: `pve-${found?.node}`,
    });
    expect(machine?.metadata.finalizers).toContain('banlieue.io/proxmoxmachine');
    expect(found?.config).toMatchObject({
      name: 'web-1',
      cores: 2,
      memory: '1024',
      tags: `banlieue.proxmoxmachine.${env.ns}.web-1`,
      ide2: `local:iso/banlieue-${uuid}.iso,media=cdrom`,
    });
    expect(String(found?.config.description)).toContain(`banlieue-owner: ProxmoxMachine/${env.ns}/web-1`);
    // The template's 10 GiB OS disk grown to the class's 20 GiB, the class's data disk added beside it.
    expect(String(found?.config.scsi0)).toContain('size=20G');
    expect(String(found?.config.scsi1)).toMatch(/^ceph:vm-\d+-disk-\d+,size=5G$/);
    expect(env.sim.state.volumes.get(`local:iso/banlieue-${uuid}.iso`)?.sizeBytes).toBeGreaterThan(0);
    expect((await eventsWith(t.api, env.ns, 'web-1', ['CreateStarted', 'Created', 'PoweredOn'])).map((e) => e.reason)).toEqual(
      expect.arrayContaining(['CreateStarted', 'Created', 'PoweredOn']),
    );
  });

  it("says how far a clone's disk copy is in the VirtualMachine's Ready message as PVE's task log tells it, then goes Ready", async () => {
    // The clone runs until released, whatever the machine's speed; its log says what the test says it copied.
    env.sim.tasks.holdNext('qmclone');
    await create('copying');
    const [task] = await waitFor('the held clone task', () => (env.sim.tasks.holding.length > 0 ? env.sim.tasks.holding : undefined), 60_000);
    if (!task) throw new Error('no held clone task');
    const messageAt = (percent: number): Promise<string> =>
      waitFor(
        `copying's Ready message at ${percent}%`,
        async () => {
          const message = readyOf(await t.get(vm(env.ns, 'copying', '', '')))?.message;
          return message?.endsWith(`is running: ${percent}% done`) ? message : undefined;
        },
        60_000,
      );
    const seen: string[] = [];
    try {
      for (const percent of [20, 60]) {
        env.sim.tasks.copied(task.upid, percent);
        seen.push(await messageAt(percent));
      }
      console.log(`copying's Ready messages during one clone: ${JSON.stringify(seen)}`);
      expect(seen).toEqual([
        expect.stringMatching(/clone task of VM \d+ on pve\d is running: 20% done$/),
        expect.stringMatching(/clone task of VM \d+ on pve\d is running: 60% done$/),
      ]);
    } finally {
      // Also when the message never came: the VM can then be deleted.
      env.sim.tasks.release(task.upid);
    }
    await readyWithAgentAddress(env, 'copying', '10.20.0.12');
  }, 180_000);

  it('drives the VM to spec.desiredPowerState: off (ACPI), then on again, the same VM', async () => {
    const uuid = await proxmoxUuidOf(env.ns, 'web-1');
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, desiredPowerState: 'PoweredOff' });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);
    expect(simVmsWithUuid(env.sim, uuid)[0]?.status).toBe('stopped');
    expect(env.sim.requests.some((r) => r.template === '/nodes/{node}/qemu/{vmid}/status/shutdown' && r.params.forceStop === '1')).toBe(true);

    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, desiredPowerState: 'PoweredOn' });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    expect(simVmsWithUuid(env.sim, uuid)[0]?.status).toBe('running');
    expect(simVmsNamed(env.sim, 'web-1')).toEqual(['web-1']);
  });

  it('restarts the VM once for spec.restartRequestedAt: an ACPI shutdown task, then a start task, status.restart Restarted', async () => {
    const uuid = await proxmoxUuidOf(env.ns, 'web-1');
    const asked = env.sim.requests.length;
    const requestedAt = new Date().toISOString();
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, restartRequestedAt: requestedAt });
    const done = await t.exists(vm(env.ns, 'web-1', '', ''), (o) => (o.status?.restart as { phase?: string } | undefined)?.phase === 'Restarted', 120_000);
    expect(done.status?.restart).toMatchObject({ requestedAt, phase: 'Restarted' });
    expect(simVmsWithUuid(env.sim, uuid)[0]?.status).toBe('running');
    const power = env.sim.requests
      .slice(asked)
      .map((r) => r.template)
      .filter((p) => /\/status\/(shutdown|stop|start)$/.test(p ?? ''));
    expect(power).toEqual(['/nodes/{node}/qemu/{vmid}/status/shutdown', '/nodes/{node}/qemu/{vmid}/status/start']);
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Restarting', 'Restarted'])).filter((e) => e.reason === 'Restarted')).toHaveLength(1);
  });

  it('applies a hardwareOverride: the disk grown at once, CPUs and memory pending until a power cycle applies them', async () => {
    const uuid = await proxmoxUuidOf(env.ns, 'web-1');
    const override = { cpus: 4, memoryMiB: 2048, diskOverrides: [{ name: 'os', sizeGiB: 30 }] };
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, hardwareOverride: override });
    await waitFor(
      'web-1 grown and its CPUs pending',
      () => {
        const found = simVmsWithUuid(env.sim, uuid)[0];
        return String(found?.config.scsi0).includes('size=30G') && found?.pending?.cores === 4 ? true : undefined;
      },
      60_000,
    );
    await waitFor(
      'the pending change said on the machine',
      async () => (readyOf(await t.get(machineRef('proxmox', env.ns, 'web-1')))?.message.includes('pending') ? true : undefined),
      60_000,
    );

    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, hardwareOverride: override, desiredPowerState: 'PoweredOff' });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOff', 60_000);
    await create('web-1', { userData: { secretRef: { name: 'web-user-data' } }, hardwareOverride: override });
    await t.exists(vm(env.ns, 'web-1', '', ''), (o) => o.status?.observedPowerState === 'PoweredOn', 60_000);
    expect(simVmsWithUuid(env.sim, uuid)[0]?.config).toMatchObject({ cores: 4, memory: '2048' });
    await waitFor(
      'the machine converged',
      async () => {
        const m = await t.get(machineRef('proxmox', env.ns, 'web-1'));
        return m?.status?.observedGeneration === (m?.metadata as { generation?: number } | undefined)?.generation && readyOf(m)?.status === 'True'
          ? true
          : undefined;
      },
      60_000,
    );
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Reconfigured'])).map((e) => e.reason)).toContain('Reconfigured');
  });

  it('deleting the VirtualMachine stops and destroys the VM, its disks and its seed ISO', async () => {
    const uuid = await proxmoxUuidOf(env.ns, 'web-1');
    const vmid = simVmsWithUuid(env.sim, uuid)[0]?.vmid;
    await t.delete(vm(env.ns, 'web-1', '', ''));
    await t.gone(machineRef('proxmox', env.ns, 'web-1'), 60_000);
    expect(simVmsWithUuid(env.sim, uuid)).toEqual([]);
    expect(simVmsNamed(env.sim, 'web-1')).toEqual([]);
    expect([...env.sim.state.volumes.values()].filter((v) => v.vmid === vmid)).toEqual([]);
    await waitFor('the seed ISO to go', () => !env.sim.state.volumes.has(`local:iso/banlieue-${uuid}.iso`), 30_000);
    expect((await eventsWith(t.api, env.ns, 'web-1', ['Deleted'])).find((e) => e.reason === 'Deleted')?.note).toBe(`Deleted the VM with UUID ${uuid}`);
  });

  it('a provider killed right after starting a clone leaves exactly one VM, picked up after the restart', async () => {
    const before = env.provider.logs().split('Clone started').length;
    await create('crash-1');
    await waitFor('the clone to start', () => (env.provider.logs().split('Clone started').length > before ? true : undefined), 60_000);
    await env.provider.kill();
    env.provider = await startProxmoxProvider(env);
    await readyWithAgentAddress(env, 'crash-1', '10.40.0.10');
    expect(simVmsNamed(env.sim, 'crash-1')).toEqual(['crash-1']);
    expect(simVmsWithUuid(env.sim, await proxmoxUuidOf(env.ns, 'crash-1'))).toHaveLength(1);
    // Its clone task kept in status.taskRef (Created), or, killed before that write, found by its description's UUID (Adopted).
    expect((await eventsWhere(t.api, env.ns, 'crash-1', (e) => e.reason === 'Created' || e.reason === 'Adopted')).map((e) => e.reason)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(Created|Adopted)$/)]),
    );
  }, 180_000);

  it('leaves alone a foreign VM that has the machine’s name, or that reuses its VMID after its VM was removed behind its back', async () => {
    const twin = env.sim.state.addVm({ vmid: 800, node: 'pve1', name: 'twin', running: true });
    const twinConfig = JSON.stringify(twin.config);
    await create('twin');
    await readyWithAgentAddress(env, 'twin', '10.50.0.10');
    const uuid = await proxmoxUuidOf(env.ns, 'twin');
    const ours = simVmsWithUuid(env.sim, uuid)[0];
    expect(ours?.vmid).not.toBe(800);
    expect(JSON.stringify(env.sim.state.vms.get(800)?.config)).toBe(twinConfig);

    // Ours removed behind banlieue's back, its VMID taken by someone else's VM.
    const vmid = ours?.vmid ?? 0;
    env.sim.state.destroyVm(vmid);
    const squatter = env.sim.state.addVm({ vmid, node: ours?.node ?? 'pve1', name: 'someone-else', running: true });
    await t.condition(machineRef('proxmox', env.ns, 'twin'), 'Ready', 'False', 'BackendMissing', 60_000);
    await t.delete(vm(env.ns, 'twin', '', ''));
    await t.gone(vm(env.ns, 'twin', '', ''), 60_000);
    expect(env.sim.state.vms.get(vmid)).toBe(squatter);
    expect(squatter.status).toBe('running');
    expect(JSON.stringify(env.sim.state.vms.get(800)?.config)).toBe(twinConfig);
  }, 180_000);

  it('gives two machines racing another writer for /cluster/nextid a VM each', async () => {
    env.sim.state.stealNextIds = 2;
    await Promise.all(['race-a', 'race-b'].map((name) => create(name)));
    await Promise.all(['race-a', 'race-b'].map((name, i) => readyWithAgentAddress(env, name, `10.60.0.${i + 10}`)));
    expect(simVmsNamed(env.sim, 'race-')).toEqual(['race-a', 'race-b']);
    expect(simVmsNamed(env.sim, 'intruder-')).toHaveLength(2);
  }, 180_000);

  it('a node going offline: its machines report it, machines elsewhere go on', async () => {
    await create('on-pve2', { placement: { failureDomainSelector: { matchLabels: { node: 'pve2' } } } });
    await readyWithAgentAddress(env, 'on-pve2', '10.70.0.2');
    env.sim.state.setNodeOnline('pve2', false);
    try {
      // Whichever comes first: its pass cannot reach the node, or the Provider no longer publishes the node's failure domain.
      const down = await waitFor(
        'on-pve2 to report its node',
        async () => {
          const ready = readyOf(await t.get(machineRef('proxmox', env.ns, 'on-pve2')));
          return ready?.status === 'False' && ['ConnectFailed', 'FailureDomainNotFound'].includes(ready.reason) ? ready : undefined;
        },
        60_000,
      );
      expect(down.message).toMatch(/node pve2 is offline or unreachable|no failure domain pve-pve2/);
      // Machines elsewhere go on: a new one is placed on an online node, the others stay Ready.
      await create('elsewhere');
      const ready = await readyWithAgentAddress(env, 'elsewhere', '10.70.0.9');
      expect(ready.status?.scheduled?.failureDomain).not.toBe('pve-pve2');
      for (const name of ['race-a', 'race-b']) {
        const m = await t.get(machineRef('proxmox', env.ns, name));
        if (m && m.status?.node !== 'pve2') expect(readyOf(m)?.status).toBe('True');
      }
    } finally {
      env.sim.state.setNodeOnline('pve2', true);
    }
    await t.condition(machineRef('proxmox', env.ns, 'on-pve2'), 'Ready', 'True', 'Reconciled', 60_000);
  }, 180_000);

  it("a Kubernetes node's VM reports the addresses of its own NIC, not the hundreds its agent lists for kube-ipvs0 and docker0", async () => {
    await create('k8s-node');
    const uuid = await proxmoxUuidOf(env.ns, 'k8s-node');
    await waitFor(
      'VM k8s-node in the simulator',
      () => {
        const [found] = simVmsWithUuid(env.sim, uuid);
        if (!found) return undefined;
        const serviceIps = Array.from({ length: 200 }, (_, i) => ({ ip: `10.96.${i >> 8}.${(i & 255) + 1}`, prefix: 32 }));
        found.agent.interfaces = [
          { name: 'kube-ipvs0', mac: '6e:12:34:56:78:9a', addresses: serviceIps },
          { name: 'docker0', mac: '02:42:ac:11:00:01', addresses: [{ ip: '172.17.0.1', prefix: 16 }] },
        ];
        return true;
      },
      120_000,
    );
    const ready = await readyWithAgentAddress(env, 'k8s-node', '10.80.0.5');
    expect(ready.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.80.0.5' }]);
    expect((await t.get(machineRef('proxmox', env.ns, 'k8s-node')))?.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.80.0.5' }]);
  }, 180_000);

  it('a Provider whose cluster has more nodes than a Provider status holds says so in Ready, naming the field', async () => {
    const big = await startProxmoxSim({ nodes: Array.from({ length: 260 }, (_, i) => `node${i}`) });
    const { secret, provider } = proxmoxWorld(env.ns, big, 'big');
    secret.metadata.name = 'pve-big-token';
    provider.metadata.name = 'pve-big';
    provider.metadata.labels = { backend: 'proxmox-big' };
    (provider.spec as { connection: { credentialsRef: { name: string } } }).connection.credentialsRef.name = 'pve-big-token';
    try {
      await t.apply(secret);
      await t.apply(provider);
      const refused = await t.condition(provider, 'Ready', 'False', 'StatusRefused', 120_000);
      const ready = readyOf(refused);
      expect(ready?.message).toMatch(/status\.failureDomains: Too many: 260: must have at most 256 items/);
      expect(ready?.message).not.toMatch(/HTTP|PATCH/);
      expect((await eventsWith(t.api, env.ns, 'pve-big', ['StatusRefused'])).map((e) => e.reason)).toContain('StatusRefused');
      expect(big.violations).toEqual([]);
    } finally {
      await t.delete(provider);
      await t.gone(provider, 60_000);
      await t.delete(secret);
      await big.stop();
    }
  }, 240_000);

  it('made no call the PVE schema refuses, over the whole run', async () => {
    await waitFor('the simulator to be quiet', () => env.sim.tasks.idle, 30_000);
    expect(env.sim.violations).toEqual([]);
    const list = await t.api.request<{ items: Obj[] }>('GET', `/apis/${INFRA}/namespaces/${env.ns}/proxmoxmachines`);
    expect(list.items.length).toBeGreaterThan(0);
  });
});
