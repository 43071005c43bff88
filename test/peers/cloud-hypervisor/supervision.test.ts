// VMM supervision: VMMs started detached outlive the process that started them; a new
// provider re-adopts them by scanning the state root, tells ours from foreign ones,
// detects one killed behind its back and cleans up after it; stopping leaves no process.
// Against the simulator and (CLOUD_HYPERVISOR_BIN, root) the real cloud-hypervisor.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanVmms, type ScannedVmm } from '../../../controller/backends/cloud-hypervisor/vmm-adoption.js';
import { startVmm, stopVmm, type VmmHostOptions } from '../../../controller/backends/cloud-hypervisor/vmm-process.js';
import { waitFor } from '../../support/wait.js';
import { writeHaltPayload } from './halt-payload.js';
import { processesMentioning, readViolations, skipsRealVmm, VMM_PEERS } from './vmm-peers.js';

const run = promisify(execFile);
skipsRealVmm('Cloud Hypervisor supervision');

function byOutcome(scanned: readonly ScannedVmm[]): Record<string, string> {
  return Object.fromEntries(scanned.map((entry) => [entry.outcome === 'adopted' ? entry.handle.uuid : entry.paths.uuid, entry.outcome]));
}

for (const peer of VMM_PEERS)
  describe.skipIf(!peer.available)(`VMM supervision with ${peer.name}`, () => {
    const name = peer.name;
    let dir: string;
    let options: VmmHostOptions;
    let kernel: string;

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'banlieue-ch-sup-'));
      kernel = writeHaltPayload(join(dir, 'halt.elf'));
      options = { binary: peer.binary(dir), root: join(dir, 'root'), startTimeoutMs: 60_000, stopTimeoutMs: 30_000 };
    });

    afterAll(async () => {
      // A safety net for a failed run: the test itself asserts nothing is left.
      for (const pid of processesMentioning(join(dir, 'root'))) process.kill(pid, 'SIGKILL');
      const violations = readViolations(dir);
      rmSync(dir, { recursive: true, force: true });
      if (name === 'simulator') expect(violations).toEqual([]);
    });

    it('re-adopts VMMs that outlived their provider, leaves foreign ones alone, and cleans up one killed behind its back', async () => {
      // GIVEN a provider process that started two VMMs, each running a VM with its UUID, and exited.
      const [first, second] = [randomUUID(), randomUUID()].sort() as [string, string];
      const standIn = new URL('./provider-stand-in.ts', import.meta.url).pathname;
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', standIn, JSON.stringify({ binary: options.binary, root: options.root, kernel, uuids: [first, second] })],
        { timeout: 120_000 },
      );
      const started = JSON.parse(stdout) as Record<string, number>;
      // ... and a VMM started here, with no VM yet, and a directory that is no machine's.
      const empty = randomUUID();
      const emptyVmm = await startVmm(options, empty);
      mkdirSync(join(options.root ?? '', 'not-a-machine'));

      // WHEN a new provider scans the root
      let scanned = await scanVmms(options);

      // THEN the two VMMs still run and are adopted with their VMs, the empty one too.
      expect(byOutcome(scanned)).toEqual({ [first]: 'adopted', [second]: 'adopted', [empty]: 'adopted' });
      for (const entry of scanned) {
        if (entry.outcome !== 'adopted') continue;
        if (entry.handle.uuid === empty) {
          expect(entry.vm).toBeUndefined();
          expect(entry.handle.pid).toBe(emptyVmm.pid);
        } else {
          expect(entry.handle.pid).toBe(started[entry.handle.uuid]);
          expect(entry.vm).toMatchObject({ state: 'Running', config: { platform: { system_uuid: entry.handle.uuid } } });
        }
      }
      await expect(startVmm(options, first)).rejects.toMatchObject({ kind: 'Rejected', code: 'VmmAlreadyRunning' });

      // WHEN a VM carrying another UUID is created in the empty VMM, it is foreign: reported, left running.
      await emptyVmm.client.createVm({
        payload: { kernel },
        memory: { size: 128 * 1024 * 1024 },
        console: { mode: 'Off' },
        platform: { system_uuid: randomUUID() },
      });
      // WHEN the second VMM is killed behind the provider's back
      const killedPid = started[second] ?? 0;
      process.kill(killedPid, 'SIGKILL');
      await waitFor('the killed VMM to be gone', () => !processesMentioning(join(options.root ?? '', second)).includes(killedPid), 30_000);
      scanned = await scanVmms(options);

      // THEN it is found dead and its socket and pidfile are removed; its log stays.
      expect(byOutcome(scanned)).toEqual({ [first]: 'adopted', [second]: 'dead', [empty]: 'foreign' });
      const dead = scanned.find((entry) => entry.outcome === 'dead');
      expect(dead && [existsSync(dead.paths.apiSocket), existsSync(dead.paths.pidFile), existsSync(dead.paths.logFile)]).toEqual([false, false, true]);

      // AND a VMM can be started again in its directory, empty, for the provider to re-create its VM.
      const restarted = await startVmm(options, second);
      await expect(restarted.client.findVm()).resolves.toBeUndefined();

      // WHEN every VMM is stopped, THEN no process and no socket is left.
      for (const entry of await scanVmms(options)) {
        if (entry.outcome === 'adopted') await stopVmm(options, entry.handle);
      }
      await stopVmm(options, emptyVmm);
      expect(processesMentioning(join(dir, 'root'))).toEqual([]);
      for (const uuid of [first, second, empty]) expect(existsSync(join(options.root ?? '', uuid, 'api.sock'))).toBe(false);
      expect(byOutcome(await scanVmms(options))).toEqual({ [first]: 'dead', [second]: 'dead', [empty]: 'dead' });
    });

    it('reports a VMM that runs but does not answer as unresponsive, and stopping it kills it', async () => {
      // Short deadlines: a stopped (SIGSTOP) VMM accepts connections and never answers.
      const impatient: VmmHostOptions = { ...options, root: join(dir, 'hung'), callTimeoutMs: 1_000, stopTimeoutMs: 1_000 };
      const vmm = await startVmm(impatient, randomUUID());
      process.kill(vmm.pid, 'SIGSTOP');

      const [scanned] = await scanVmms(impatient);
      expect(scanned).toMatchObject({ outcome: 'unresponsive', pid: vmm.pid, reason: expect.stringContaining('no answer within 1000 ms') });

      await stopVmm(impatient, vmm);
      expect(processesMentioning(join(dir, 'hung'))).toEqual([]);
      expect(existsSync(vmm.paths.pidFile)).toBe(false);
    });
  });
