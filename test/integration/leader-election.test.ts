// Two `banlieue controller` replicas against a real kube-apiserver, electing
// a leader on a Lease: one leads and writes, the other stands by and writes
// nothing, and the standby takes over when the leader crashes or stops.
// This file runs its own control plane so its replicas see no other suite's objects.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { waitFor } from '../support/wait.js';
import { applyObjects, createBackend, usePrivatePlane, virtualMachine } from '../support/private-plane-fixtures.js';

const LEASE_SECONDS = 6;
/** How often a standby retries: `banlieue controller` derives it from the lease duration (controller-command.ts). */
const RETRY_MS = Math.max(500, Math.round((LEASE_SECONDS * 1000) / 7));
/** Allowance for a request or two and for this test's polling, on a busy machine. */
const SLACK_MS = 2000;

const { plane, track } = usePrivatePlane();
const watchers: ChildProcess[] = [];



afterEach(async () => {
  for (const w of watchers.splice(0)) w.kill('SIGKILL');
});


const createVm = (ns: string, name: string): Promise<string> => applyObjects(plane(), [virtualMachine(ns, name)]);

/** Wait until the VM is Scheduled=True and its VSphereMachine exists. */
async function waitScheduled(ns: string, name: string): Promise<void> {
  await waitFor(`VirtualMachine ${ns}/${name} to be Scheduled with its VSphereMachine`, async () => {
    const vm = JSON.parse(await plane().kubectl(['get', 'virtualmachines.banlieue.io', name, '-n', ns, '-o', 'json'])) as { status?: { conditions?: { type: string; status: string }[] } };
    await plane().kubectl(['get', 'vspheremachines.infrastructure.banlieue.io', name, '-n', ns]);
    return vm.status?.conditions?.some((c) => c.type === 'Scheduled' && c.status === 'True') ?? false;
  });
}

const readiness = async (p: RoleProcess): Promise<string> => (await p.health('/readyz'))[1];
const writes = (p: RoleProcess): Promise<number> => p.metric('banlieue_api_writes_total');
const leading = (p: RoleProcess): Promise<number> => p.metric('banlieue_leader', { role: 'controller' });

async function holderOf(ns: string, lease: string): Promise<string> {
  return plane().kubectl(['get', 'lease', lease, '-n', ns, '-o', 'jsonpath={.spec.holderIdentity}']);
}

async function startReplica(ns: string, lease: string, identity: string): Promise<RoleProcess> {
  const replica = await startRole([
    'controller',
    '--kubeconfig', plane().kubeconfigPath,
    '--leader-election-namespace', ns,
    '--leader-election-id', lease,
    '--leader-election-identity', identity,
    '--lease-duration', String(LEASE_SECONDS),
  ]);
  track(replica);
  return replica;
}

/** Replica a, once it leads, then replica b, once it stands by: which one leads is then known. */
async function startPair(ns: string, lease: string): Promise<[RoleProcess, RoleProcess]> {
  const a = await startReplica(ns, lease, `${lease}-a`);
  await waitFor(`${lease}-a to lead`, async () => (await readiness(a)) === 'leader');
  const b = await startReplica(ns, lease, `${lease}-b`);
  await waitFor(`${lease}-b to stand by`, async () => (await readiness(b)) === 'standby');
  return [a, b];
}

/** Every holderIdentity the Lease goes through, as a kubectl watch sees it ('' when released). */
function watchHolders(ns: string, lease: string): () => string[] {
  const watcher = spawn(plane().tools.kubectl, [`--kubeconfig=${plane().kubeconfigPath}`, 'get', 'lease', lease, '-n', ns, '--watch', '-o', 'jsonpath={.spec.holderIdentity}{"\\n"}']);
  watchers.push(watcher);
  let out = '';
  watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return () => out.split('\n').slice(0, -1);
}

describe('controller leader election', () => {
  it('lets exactly one replica lead; the standby makes no API writes while the leader schedules', async () => {
    const ns = 'one-leader';
    await createBackend(plane(), ns);
    const [a, b] = await startPair(ns, 'lease-one');

    expect(await a.health('/readyz')).toEqual([200, 'leader']);
    expect(await b.health('/readyz')).toEqual([200, 'standby']);
    expect([await leading(a), await leading(b)]).toEqual([1, 0]);
    expect(await holderOf(ns, 'lease-one')).toBe('lease-one-a');

    await createVm(ns, 'vm-1');
    await waitScheduled(ns, 'vm-1');
    expect(await writes(a)).toBeGreaterThan(0);
    expect(await writes(b)).toBe(0);
    expect(await readiness(b)).toBe('standby');
  });

  it('hands leadership to the standby within one lease duration after the leader is killed, and the new leader schedules', async () => {
    const ns = 'leader-killed';
    await createBackend(plane(), ns);
    const [a, b] = await startPair(ns, 'lease-crash');

    const killedAt = Date.now();
    await a.kill();
    // The standby judges expiry from when it last saw the Lease renewed, and
    // looks again every RETRY_MS: one lease duration plus two retries at most.
    const budgetMs = LEASE_SECONDS * 1000 + 2 * RETRY_MS + SLACK_MS;
    await waitFor('the standby to lead', async () => (await readiness(b)) === 'leader', budgetMs - (Date.now() - killedAt));
    expect(await holderOf(ns, 'lease-crash')).toBe('lease-crash-b');
    expect(await leading(b)).toBe(1);

    await createVm(ns, 'vm-after-crash');
    await waitScheduled(ns, 'vm-after-crash');
    expect(await writes(b)).toBeGreaterThan(0);
  });

  it('releases the Lease when the leader stops gracefully, so the standby takes over without waiting for expiry', async () => {
    const ns = 'leader-stopped';
    await createBackend(plane(), ns);
    const [a, b] = await startPair(ns, 'lease-release');
    const holders = watchHolders(ns, 'lease-release');
    await waitFor('the Lease watch to start', () => holders().length > 0);

    const stoppedAt = Date.now();
    const exitCode = await a.stop();
    // Without a release the standby would wait out the lease, at least
    // LEASE_SECONDS minus one renew period: this deadline is well below that.
    await waitFor('the standby to lead', async () => (await readiness(b)) === 'leader', RETRY_MS + SLACK_MS - (Date.now() - stoppedAt));
    await waitFor('the watch to see the new holder', () => holders().includes('lease-release-b'));

    expect(exitCode, a.logs()).toBe(0);
    expect(a.logs()).toContain('Released the lease');
    // a, then nobody (released), then b.
    const seen = holders().filter((h, i, all) => i === 0 || h !== all[i - 1]);
    expect(seen.slice(-3)).toEqual(['lease-release-a', '', 'lease-release-b']);

    await createVm(ns, 'vm-after-stop');
    await waitScheduled(ns, 'vm-after-stop');
  });
});
