// `make test-faults`: kills and outages against the real API server and the
// backend peers, bounded and reproducible by seed (FAULT_SEED, printed). Prints
// a table and a `FAULTS_RESULT {...}` line on stdout, progress on stderr; exits
// non-zero when the fleet did not end as asked (a duplicate, an orphan, a stuck
// finalizer, a VM not Ready or not gone, a second writer, a missed outage).
// vSphere on vcsim only: the other backends' peers are a later extension.
import { setTimeout as delay } from 'node:timers/promises';
import { Teardown } from '../bench/teardown.js';
import { textTable } from '../bench/text-table.js';
import { SeededRandom, seedFromEnv } from '../support/seeded-random.js';
import { decideVerdict } from './verdict.js';
import { runVsphereFaults, type FaultRun } from './vsphere-faults.js';

/** The seed when FAULT_SEED is not set: `make test` runs the same faults every time. */
const DEFAULT_SEED = 1515;

const began = performance.now();
const say = (message: string): void => void process.stderr.write(`[${((performance.now() - began) / 1000).toFixed(1).padStart(6)} s] ${message}\n`);

function table(run: FaultRun): string {
  const { counts, fleet, leases } = run;
  const kills = Object.values(counts.kills).reduce((a, b) => a + b, 0);
  const killDetail = Object.entries(counts.kills).map(([what, n]) => `${what} ${n}`).join(', ');
  return [
    `faults (vsphere on vcsim), seed ${run.seed}, ${(run.durationMs / 1000).toFixed(0)} s`,
    textTable([
      ['kills (kill -9)', String(kills), killDetail],
      ['other replica exits (lost Lease, crash)', String(counts.otherExits), ''],
      ['failovers (Lease holder changes)', String(leases.controller.failovers + leases.provider.failovers), `controller ${leases.controller.failovers}, provider ${leases.provider.failovers}`],
      ['outages', String(counts.apiserverOutages + counts.backendOutages), `kube-apiserver ${counts.apiserverOutages}, vcsim ${counts.backendOutages}`],
      ['ProviderReachable=False during the vcsim outage', counts.unreachableSeen ? 'yes' : 'NO', ''],
      ['machines failed during the vcsim outage', String(counts.failedDuringOutage.length), ''],
      ['Provider reachable again after it', counts.recovered ? 'yes' : 'NO', ''],
      ['VMs expected / found', `${fleet.expected} / ${fleet.found}`, ''],
      ['VMs not Ready / deleted not gone', `${fleet.notReady.length} / ${fleet.notGone.length}`, ''],
      ['duplicates', String(fleet.duplicates), ''],
      ['orphans', String(fleet.orphans), ''],
      ['stuck finalizers', String(fleet.stuckFinalizers), ''],
      ['second writers (audit log)', String(leases.controller.secondWriters.length + leases.provider.secondWriters.length), `of ${leases.controller.writesChecked + leases.provider.writesChecked} writes checked`],
    ]),
  ].join('\n');
}

const teardown = new Teardown();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping everything the run started`);
    void teardown.run().then(() => process.exit(130));
  });
}

let failed = true;
const seed = seedFromEnv('FAULT_SEED', DEFAULT_SEED);
say(`FAULT_SEED=${seed}`);
try {
  const run = await runVsphereFaults(teardown, say, new SeededRandom(seed));
  const verdict = decideVerdict(run);
  process.stdout.write(`\n${table(run)}\n`);
  for (const line of run.fleet.details) process.stdout.write(`  ${line}\n`);
  for (const problem of verdict.problems) process.stdout.write(`  problem: ${problem}\n`);
  for (const w of [...run.leases.controller.secondWriters, ...run.leases.provider.secondWriters].slice(0, 20)) {
    process.stdout.write(`  second writer: ${w.user} (holder ${w.holder ?? 'none'}) at ${w.at}: ${w.what}\n`);
  }
  process.stdout.write(`\nFAULTS_RESULT ${JSON.stringify({ seed, durationMs: Math.round(run.durationMs), counts: run.counts, fleet: { ...run.fleet, details: undefined }, failovers: { controller: run.leases.controller.failovers, provider: run.leases.provider.failovers }, passed: verdict.passed })}\n`);
  if (!verdict.passed) say(`FAILED (replay with FAULT_SEED=${seed}):\n${run.logs}`);
  failed = !verdict.passed;
} catch (err) {
  say(`the fault run did not complete (FAULT_SEED=${seed}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await Promise.race([teardown.run(), delay(60_000)]);
}
// Exit explicitly: a keep-alive socket of a client must not hold the process open.
process.exit(failed ? 1 : 0);
