// The VMM client's whole lifecycle, with the same assertions against the simulator and
// (CLOUD_HYPERVISOR_BIN, root) the real cloud-hypervisor: wrong-state answers, create →
// boot → pause/resume → resize → reboot → shutdown → delete, vmm.shutdown. The guest is
// halt-payload.ts: it boots for real and uses no CPU, so no timing is asserted.
import { existsSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSignal } from '../../../controller/backends/cancellation.js';
import { VmmClient } from '../../../controller/backends/cloud-hypervisor/client/vmm-client.js';
import type { VmConfig } from '../../../controller/backends/cloud-hypervisor/client/vmm-types.js';
import { writeHaltPayload } from './halt-payload.js';
import { launchVmm, readViolations, simulatorPeer, skipsRealVmm, VMM_PEERS, type ChildVmm } from './vmm-peers.js';

const MIB = 1024 * 1024;
skipsRealVmm('Cloud Hypervisor client');

for (const peer of VMM_PEERS)
  describe.skipIf(!peer.available)(`VMM client against ${peer.name}`, () => {
    const name = peer.name;
    let dir: string;
    let vmm: ChildVmm;
    let client: VmmClient;
    let config: VmConfig;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'banlieue-ch-client-'));
      const disk = join(dir, 'os.raw');
      writeFileSync(disk, '');
      truncateSync(disk, 16 * MIB);
      config = {
        cpus: { boot_vcpus: 1, max_vcpus: 2, nested: false },
        memory: { size: 128 * MIB, hotplug_size: 128 * MIB },
        payload: { kernel: writeHaltPayload(join(dir, 'halt.elf')), cmdline: 'console=ttyS0' },
        disks: [{ path: disk, id: 'os', image_type: 'Raw', serial: 'os' }],
        rng: { src: '/dev/urandom' },
        serial: { mode: 'File', file: join(dir, 'serial.log') },
        console: { mode: 'Off' },
        platform: { system_uuid: randomUUID(), oem_strings: ['banlieue.io/machine=test/client'] },
      };
      vmm = await launchVmm(peer.binary(dir), join(dir, 'api.sock'));
      client = new VmmClient({ socketPath: join(dir, 'api.sock'), timeoutMs: 30_000 });
    }, 90_000);

    afterAll(async () => {
      await vmm?.kill();
      const violations = readViolations(dir);
      rmSync(dir, { recursive: true, force: true });
      if (name === 'simulator') expect(violations).toEqual([]);
    });

    it('reports a supported version with vmm.ping', async () => {
      const ping = await client.pingSupported();
      expect(ping.version).toMatch(/^53\./);
      expect(ping.pid).toBe(vmm.child.pid);
    });

    it('answers calls that need a VM as not created (NotFound) or not running (Rejected) before vm.create', async () => {
      await client.deleteVm();
      await expect(client.vmInfo()).rejects.toMatchObject({ name: 'VmmApiError', kind: 'NotFound', code: 'VmNotCreated', status: 404 });
      await expect(client.findVm()).resolves.toBeUndefined();
      await expect(client.bootVm()).rejects.toMatchObject({ kind: 'NotFound', code: 'VmNotCreated' });
      await expect(client.rebootVm()).rejects.toMatchObject({ kind: 'NotFound', code: 'VmNotCreated' });
      await expect(client.resizeVm({ desired_vcpus: 2 })).rejects.toMatchObject({ kind: 'NotFound', code: 'VmNotCreated' });
      for (const call of [() => client.pauseVm(), () => client.resumeVm(), () => client.shutdownVm(), () => client.powerButton()]) {
        await expect(call()).rejects.toMatchObject({ kind: 'Rejected', code: 'VmNotRunning', status: 500 });
      }
    });

    it('creates, boots, pauses, resumes, resizes, reboots, shuts down and deletes a VM', async () => {
      await client.deleteVm();
      await client.createVm(config);
      let info = await client.vmInfo();
      expect(info.state).toBe('Created');
      expect(info.config.platform?.system_uuid).toBe(config.platform?.system_uuid);
      expect(info.config.payload).toEqual(config.payload);
      await expect(client.createVm(config)).rejects.toMatchObject({ kind: 'Rejected', code: 'VmAlreadyCreated' });

      await client.bootVm();
      expect((await client.vmInfo()).state).toBe('Running');
      await expect(client.bootVm()).rejects.toMatchObject({ kind: 'Rejected', code: 'VmAlreadyCreated' });
      await expect(client.resumeVm()).rejects.toMatchObject({ kind: 'Rejected', code: 'InvalidStateTransition' });

      await client.pauseVm();
      expect((await client.vmInfo()).state).toBe('Paused');
      await expect(client.pauseVm()).rejects.toMatchObject({ kind: 'Rejected', code: 'InvalidStateTransition' });
      await client.resumeVm();
      expect((await client.vmInfo()).state).toBe('Running');

      await client.resizeVm({ desired_vcpus: 2 });
      expect((await client.vmInfo()).config.cpus?.boot_vcpus).toBe(2);
      await expect(client.resizeVm({ desired_vcpus: 3 })).rejects.toMatchObject({
        kind: 'Rejected',
        chain: expect.arrayContaining(['Requested vCPUs exceed maximum']),
      });
      await client.resizeDisk({ id: 'os', desired_size: 32 * MIB });
      expect(statSync(config.disks?.[0]?.path ?? '').size).toBe(32 * MIB);

      // The halting guest has no ACPI: the press is delivered, and nothing happens.
      await client.powerButton();
      expect((await client.vmInfo()).state).toBe('Running');
      await client.rebootVm();
      expect((await client.vmInfo()).state).toBe('Running');

      await client.shutdownVm();
      info = await client.vmInfo();
      expect(info.state).toBe('Created');
      await expect(client.pauseVm()).rejects.toMatchObject({ kind: 'Rejected', code: 'VmNotRunning' });
      await client.bootVm();
      expect((await client.vmInfo()).state).toBe('Running');

      await client.deleteVm();
      await expect(client.findVm()).resolves.toBeUndefined();
    });

    it('surfaces the error chain when vm.boot finds the kernel missing', async () => {
      await client.deleteVm();
      await client.createVm({ ...config, payload: { kernel: join(dir, 'no-such-kernel') } });
      await expect(client.bootVm()).rejects.toMatchObject({
        kind: 'Rejected',
        status: 500,
        chain: ['Error from API', 'The VM could not boot', 'Cannot open kernel file', 'No such file or directory (os error 2)'],
      });
      await client.deleteVm();
    });

    it('exits on vmm.shutdown, taking its socket along, after which calls are Unreachable', async () => {
      await client.createVm(config);
      await client.bootVm();
      await client.shutdownVmm();
      expect(await vmm.exited).toBe(0);
      expect(existsSync(client.socketPath)).toBe(false);
      await expect(client.ping()).rejects.toMatchObject({ name: 'BackendError', kind: 'Unreachable', code: 'ENOENT' });
    });
  });

describe('VMM client transport (simulator)', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'banlieue-ch-transport-'));
  });

  afterAll(() => {
    const violations = readViolations(dir);
    rmSync(dir, { recursive: true, force: true });
    expect(violations).toEqual([]);
  });

  it('refuses a VMM below the supported floor, naming the floor, and still pings it', async () => {
    const socketPath = join(dir, 'old.sock');
    const vmm = await launchVmm(simulatorPeer.binary(dir, { version: '52.0.0' }), socketPath);
    try {
      const client = new VmmClient({ socketPath });
      await expect(client.pingSupported()).rejects.toMatchObject({
        kind: 'Rejected',
        code: 'VmmVersionUnsupported',
        message: expect.stringContaining('supported floor v53.0'),
      });
      await expect(client.ping()).resolves.toMatchObject({ version: '52.0.0' });
    } finally {
      await vmm.kill();
    }
  });

  it('gives up on a call at its deadline (Unreachable, Timeout) and when the pass is aborted', async () => {
    const socketPath = join(dir, 'slow.sock');
    const vmm = await launchVmm(simulatorPeer.binary(dir, { delaysMs: { 'vm.boot': 60_000 } }), socketPath);
    try {
      await expect(new VmmClient({ socketPath, timeoutMs: 500 }).bootVm()).rejects.toMatchObject({ kind: 'Unreachable', code: 'Timeout' });
      const pass = new AbortController();
      const booting = withSignal(pass.signal, () => new VmmClient({ socketPath }).bootVm());
      pass.abort(new Error('role stopping'));
      await expect(booting).rejects.toThrow('role stopping');
      await expect(withSignal(pass.signal, () => new VmmClient({ socketPath }).ping())).rejects.toThrow('role stopping');
    } finally {
      await vmm.kill();
    }
  });

  it('reports a missing socket and a socket nobody listens on (a killed VMM) as Unreachable', async () => {
    await expect(new VmmClient({ socketPath: join(dir, 'none.sock') }).ping()).rejects.toMatchObject({ kind: 'Unreachable', code: 'ENOENT' });
    const socketPath = join(dir, 'killed.sock');
    const vmm = await launchVmm(simulatorPeer.binary(dir), socketPath);
    await vmm.kill();
    expect(existsSync(socketPath)).toBe(true);
    await expect(new VmmClient({ socketPath }).ping()).rejects.toMatchObject({ kind: 'Unreachable', code: 'ECONNREFUSED' });
  });
});
