// `make bench`: run every case (or those named: `npx tsx test/bench/run.ts vsphere`),
// print each one's table and a `BENCH_RESULT {...}` line on stdout, progress on
// stderr. Exits non-zero only when a case could not complete, never for slowness.
import { setTimeout as delay } from 'node:timers/promises';
import type { BenchCase } from './bench-case.js';
import { cloudHypervisorBench } from './cloud-hypervisor.js';
import { controllerScaleBench } from './controller-scale.js';
import { libvirtBench } from './libvirt.js';
import { libvirtCostPerVmBench, libvirtIdleBench, libvirtScaleBench } from './libvirt-scale.js';
import { Teardown } from './teardown.js';
import { vsphereBench } from './vsphere.js';
import { vsphereDelayedCloneBench } from './vsphere-delayed-clone.js';
import { proxmoxBench } from './proxmox.js';
import { capvBench } from './capv.js';

const CASES: readonly BenchCase[] = [
  vsphereBench,
  vsphereDelayedCloneBench,
  proxmoxBench,
  cloudHypervisorBench,
  libvirtBench,
  libvirtScaleBench,
  libvirtCostPerVmBench,
  controllerScaleBench,
  libvirtIdleBench,
];
/** Run only when named (`make bench-capv`): CAPV takes minutes to build and the case minutes to run. */
const NAMED_ONLY: readonly BenchCase[] = [capvBench];

const began = performance.now();
const say = (message: string): void => void process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => ![...CASES, ...NAMED_ONLY].some((c) => c.name === name));
if (unknown.length > 0) {
  process.stderr.write(`unknown bench case ${unknown.join(', ')}; cases: ${[...CASES, ...NAMED_ONLY].map((c) => c.name).join(', ')}\n`);
  process.exit(2);
}

/** Runs one case and its teardown; true when it completed. */
async function runCase(bench: BenchCase, teardown: Teardown): Promise<boolean> {
  try {
    const { table, result } = await bench.run(teardown, say);
    process.stdout.write(`\n${table}\n\nBENCH_RESULT ${JSON.stringify({ case: bench.name, ...result })}\n`);
    return true;
  } catch (err) {
    say(`${bench.name} did not complete: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return false;
  } finally {
    await teardown.run();
  }
}

let current: { teardown: Teardown; done: Promise<boolean> } | undefined;
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    say(`${signal}: stopping everything the bench started`);
    void (async () => {
      await current?.teardown.run();
      // A process whose start was under way is registered, and so stopped, only once
      // its start resolves: let the case run on briefly, then stop what it registered.
      await Promise.race([current?.done, delay(20_000)]);
      await current?.teardown.run();
      process.exit(130);
    })();
  });
}

let failed = false;
const chosen = wanted.length === 0 ? CASES : [...CASES, ...NAMED_ONLY].filter((c) => wanted.includes(c.name));
for (const bench of chosen) {
  if (interrupted) break;
  const teardown = new Teardown();
  current = { teardown, done: runCase(bench, teardown) };
  if (!(await current.done)) failed = true;
}
// Exit explicitly: a keep-alive socket of a client must not hold the process open.
if (!interrupted) process.exit(failed ? 1 : 0);
