// A copy of a machine's VM made in Proxmox VE (the VM's "Clone" in its UI,
// POST /nodes/{node}/qemu/{vmid}/clone) is a VM of its own: qemu-server gives
// it a new smbios1 UUID but copies the rest of the config, description and
// tags included, so it carries the lines that name the machine's UUID and
// mark. Once the machine's own VM is gone, the copy is not that VM
// (docs/adr/0022-when-banlieue-destroys-a-vm.md): it is never powered, adopted
// or destroyed for the machine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestApi, machineRef, vm } from '../support/fixtures.js';
import { proxmoxUuidOf, readyWithAgentAddress, simVmsWithUuid, startProxmoxEnv, stopProxmoxEnv, type ProxmoxEnv } from '../support/proxmox/env.js';

const t = new TestApi();

describe("a copy of a ProxmoxMachine's VM (simulator)", () => {
  let env: ProxmoxEnv;
  beforeAll(async () => {
    // Converged machines are read again every 2 s: a VM gone behind banlieue's back shows soon.
    env = await startProxmoxEnv('pve-copy', { providerFlags: ['--resync-period', '2'] });
  }, 180_000);
  afterAll(() => stopProxmoxEnv(env), 300_000);

  it('is left as it is once the machine’s own VM is removed: the machine reports BackendMissing, and deleting it keeps the copy', async () => {
    await t.apply(vm(env.ns, 'web', env.world.vmClass.metadata.name, env.world.vmImage.metadata.name));
    await readyWithAgentAddress(env, 'web', '10.90.0.10');
    const uuid = await proxmoxUuidOf(env.ns, 'web');
    const [ours] = simVmsWithUuid(env.sim, uuid);
    if (!ours) throw new Error('web is not in the simulator');

    // What a PVE user's clone of the VM leaves, stopped: its description and tags, another smbios1 UUID.
    const copy = env.sim.state.addVm({
      vmid: 950,
      node: ours.node,
      name: 'web-backup',
      config: { description: String(ours.config.description), tags: String(ours.config.tags) },
    });
    const copyConfig = JSON.stringify(copy.config);
    // Then the machine's own VM is removed behind banlieue's back.
    env.sim.state.destroyVm(ours.vmid);

    await t.condition(machineRef('proxmox', env.ns, 'web'), 'Ready', 'False', 'BackendMissing', 60_000).catch(async (err: unknown) => {
      const ready = (await t.get(machineRef('proxmox', env.ns, 'web')))?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready');
      throw new Error(`${String(err)}; the machine says ${JSON.stringify(ready)}; the copy is ${copy.status}`);
    });
    expect(copy.status).toBe('stopped');
    await t.delete(vm(env.ns, 'web', '', ''));
    await t.gone(vm(env.ns, 'web', '', ''), 60_000);
    expect(env.sim.state.vms.get(950)).toBe(copy);
    expect(copy.status).toBe('stopped');
    expect(JSON.stringify(copy.config)).toBe(copyConfig);
  }, 180_000);
});
