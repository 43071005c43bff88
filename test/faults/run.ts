// `make test-faults`: kills and outages against the real API server and the
// backend peers, bounded and reproducible by seed (FAULT_SEED, printed). Prints
// a table and a `FAULTS_RESULT {...}` line on stdout, progress on stderr; exits
// non-zero when the fleet did not end as asked (a duplicate, an orphan, a VM
// re-created unasked, a stuck finalizer, a VM not Ready or not gone, a second
// writer, a missed outage).
// Every backend with a fault world runs in turn, each on its own control
// plane, one table each (FAULT_BACKEND=vsphere|proxmox|libvirt|cloud-hypervisor runs one); the run
// fails when any backend's does.
import { setTimeout as delay } from 'node:timers/promises';
import { Teardown } from '../bench/teardown.js';
import { textTable } from '../bench/text-table.js';
import { SeededRandom, seedFromEnv } from '../support/seeded-random.js';
import { runFaults, type FaultRun } from './fault-run.js';
import type { StartFaultWorld } from './fault-world.js';
import { startCloudHypervisorFaultWorld } from './cloud-hypervisor-faults.js';
import { startLibvirtFaultWorld } from './libvirt-faults.js';
import { startProxmoxFaultWorld } from './proxmox-faults.js';
import { decideVerdict } from './verdict.js';
import { startVsphereFaultWorld } from './vsphere-faults.js';

/** The seed when FAULT_SEED is not set: `make test` runs the same faults every time. */
const DEFAULT_SEED = 1515;

const WORLDS: Readonly<Record<string, StartFaultWorld>> = {
  vsphere: startVsphereFaultWorld,
  proxmox: startProxmoxFaultWorld,
  libvirt: startLibvirtFaultWorld,
  'cloud-hypervisor': startCloudHypervisorFaultWorld,
};

const began = performance.now();
const say = (message: string): void => void process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);

function table(run: FaultRun): string {
  const { counts, fleet, leases } = run;
  const kills = Object.values(counts.kills).reduce((a, b) => a + b, 0);
  const killDetail = Object.entries(counts.kills)
    .map(([what, n]) => `${what} ${n}`)
    .join(', ');
  return [
    `faults (${run.title}), seed ${run.seed}, ${(run.durationMs / 1000).toFixed(0)} s`,
    textTable([
      ['kills (kill -9)', String(kills), killDetail],
      ['other replica exits (lost Lease, crash)', String(counts.otherExits), ''],
      [
        'failovers (Lease holder changes)',
        String(leases.controller.failovers + leases.provider.failovers),
        `controller ${leases.controller.failovers}, provider ${leases.provider.failovers}`,
      ],
      ['outages', String(counts.apiserverOutages + counts.backendOutages), `kube-apiserver ${counts.apiserverOutages}, ${run.peer} ${counts.backendOutages}`],
      [`${run.outageSign} during the ${run.peer} outage`, counts.unreachableSeen ? 'yes' : 'NO', ''],
      [`machines failed during the ${run.peer} outage`, String(counts.failedDuringOutage.length), ''],
      ['Provider reachable again after it', counts.recovered ? 'yes' : 'NO', ''],
      ['VMs expected / found', `${fleet.expected} / ${fleet.found}`, ''],
      ['VMs not Ready / deleted not gone', `${fleet.notReady.length} / ${fleet.notGone.length}`, ''],
      ['duplicates', String(fleet.duplicates), ''],
      ['orphans', String(fleet.orphans), ''],
      [
        'recreated',
        String(run.recreation.recreated),
        `of ${run.recreation.watched} VirtualMachines watched from their first Ready, ${run.recreation.watchedById} by their backend VM's own id too`,
      ],
      ['stuck finalizers', String(fleet.stuckFinalizers), ''],
      [
        'second writers (audit log)',
        String(leases.controller.secondWriters.length + leases.provider.secondWriters.length),
        `of ${leases.controller.writesChecked + leases.provider.writesChecked} writes checked`,
      ],
    ]),
  ].join('\n');
}

/** Runs one backend's faults on its own control plane and peer, all stopped after; true when it passed. */
async function runBackend(backend: string, startWorld: StartFaultWorld, seed: number): Promise<boolean> {
  const teardown = new Teardown();
  current = teardown;
  say(`${backend}: FAULT_SEED=${seed}`);
  try {
    const run = await runFaults(teardown, say, new SeededRandom(seed), backend, startWorld);
    const verdict = decideVerdict(run);
    process.stdout.write(`\n${table(run)}\n`);
    for (const line of [...run.fleet.details, ...run.recreation.details]) process.stdout.write(`  ${line}\n`);
    for (const problem of verdict.problems) process.stdout.write(`  problem: ${problem}\n`);
    for (const w of [...run.leases.controller.secondWriters, ...run.leases.provider.secondWriters].slice(0, 20)) {
      process.stdout.write(`  second writer: ${w.user} (holder ${w.holder ?? 'none'}) at ${w.at}: ${w.what}\n`);
    }
    process.stdout.write(
      `\nFAULTS_RESULT ${JSON.stringify({ backend, seed, durationMs: Math.round(run.durationMs), counts: run.counts, fleet: { ...run.fleet, details: undefined }, recreation: { ...run.recreation, details: undefined }, failovers: { controller: run.leases.controller.failovers, provider: run.leases.provider.failovers }, passed: verdict.passed })}\n`,
    );
    if (!verdict.passed) say(`${backend} FAILED (replay with FAULT_BACKEND=${backend} FAULT_SEED=${seed}):\n${run.logs}`);
    say(`${backend}: every replica's whole output is in ${run.logsPath}`);
    return verdict.passed;
  } catch (err) {
    say(
      `the ${backend} fault run did not complete (FAULT_BACKEND=${backend} FAULT_SEED=${seed}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return false;
  } finally {
    await Promise.race([teardown.run(), delay(60_000)]);
  }
}

let current: Teardown | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping everything the run started`);
    void (current?.run() ?? Promise.resolve()).then(() => process.exit(130));
  });
}

const USAGE = `usage: make test-faults (or tsx test/faults/run.ts), configured by environment only:
  FAULT_BACKEND=${Object.keys(WORLDS).join('|')}  one backend (default: each in turn)
  FAULT_SEED=<n>  the faults to replay (default ${DEFAULT_SEED})
`;
const [firstArg] = process.argv.slice(2);
if (firstArg === '--help' || firstArg === '-h') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (firstArg !== undefined) {
  process.stderr.write(`${firstArg}: takes no arguments\n${USAGE}`);
  process.exit(2);
}

const seed = seedFromEnv('FAULT_SEED', DEFAULT_SEED);
const only = process.env.FAULT_BACKEND;
if (only !== undefined && !(only in WORLDS)) {
  say(`FAULT_BACKEND=${only}: no such backend (${Object.keys(WORLDS).join(', ')})`);
  process.exit(2);
}
const failedBackends: string[] = [];
for (const [backend, startWorld] of Object.entries(WORLDS)) {
  if (only !== undefined && backend !== only) continue;
  if (!(await runBackend(backend, startWorld, seed))) failedBackends.push(backend);
}
if (failedBackends.length > 0) say(`failed: ${failedBackends.join(', ')}`);
// Exit explicitly: a keep-alive socket of a client must not hold the process open.
process.exit(failedBackends.length > 0 ? 1 : 0);
