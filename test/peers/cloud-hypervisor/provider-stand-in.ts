// A stand-in for the provider role, run as its own process by supervision.test.ts: it
// starts one VMM per UUID through the supervision code, creates and boots a VM carrying
// that UUID in each, prints what it started as one JSON line, and exits. The VMMs must
// outlive it, as they outlive a provider restart or upgrade.
// Usage: node --import tsx provider-stand-in.ts '<json: { binary, root, kernel, uuids }>'
import { startVmm } from '../../../controller/backends/cloud-hypervisor/vmm-process.js';

interface StandInArgs {
  readonly binary: string;
  readonly root: string;
  readonly kernel: string;
  readonly uuids: readonly string[];
}

const args = JSON.parse(process.argv[2] ?? '{}') as StandInArgs;
const started: Record<string, number> = {};
for (const uuid of args.uuids) {
  const vmm = await startVmm({ binary: args.binary, root: args.root }, uuid);
  await vmm.client.createVm({
    cpus: { boot_vcpus: 1, max_vcpus: 1 },
    memory: { size: 128 * 1024 * 1024 },
    payload: { kernel: args.kernel },
    serial: { mode: 'File', file: vmm.paths.serialLog },
    console: { mode: 'Off' },
    platform: { system_uuid: uuid },
  });
  await vmm.client.bootVm();
  started[uuid] = vmm.pid;
}
process.stdout.write(`${JSON.stringify(started)}\n`);
