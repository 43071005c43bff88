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
/**
 * The graceful hand-over's lease: long enough that a standby which waited
 * for expiry instead of seeing the release cannot pass for one that did,
 * however slow the machine.
 */
const RELEASE_LEASE_SECONDS = 30;
/** A deadline for liveness only: what a test asserts about time, it reads from the Lease. */
const TAKEOVER_DEADLINE_MS = 90_000;

const { plane, track } = usePrivatePlane();
const watchers: ChildProcess[] = [];

afterEach(async () => {
  for (const w of watchers.splice(0)) w.kill('SIGKILL');
});

const createVm = (ns: string, name: string): Promise<string> => applyObjects(plane(), [virtualMachine(ns, name)]);

/** Wait until the VM is Scheduled=True and its VSphereMachine exists. */
async function waitScheduled(ns: string, name: string): Promise<void> {
  await waitFor(`VirtualMachine ${ns}/${name} to be Scheduled with its VSphereMachine`, async () => {
    const vm = JSON.parse(await plane().kubectl(['get', 'virtualmachines.banlieue.io', name, '-n', ns, '-o', 'json'])) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
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

async function startReplica(ns: string, lease: string, identity: string, leaseSeconds: number): Promise<RoleProcess> {
  const replica = await startRole([
    'controller',
    '--kubeconfig',
    plane().kubeconfigPath,
    '--leader-election-namespace',
    ns,
    '--leader-election-id',
    lease,
    '--leader-election-identity',
    identity,
    '--lease-duration',
    String(leaseSeconds),
  ]);
  track(replica);
  return replica;
}

/** Replica a, once it leads, then replica b, once it stands by: which one leads is then known. */
async function startPair(ns: string, lease: string, leaseSeconds = LEASE_SECONDS): Promise<[RoleProcess, RoleProcess]> {
  const a = await startReplica(ns, lease, `${lease}-a`, leaseSeconds);
  await waitFor(`${lease}-a to lead`, async () => (await readiness(a)) === 'leader', 60_000);
  const b = await startReplica(ns, lease, `${lease}-b`, leaseSeconds);
  await waitFor(`${lease}-b to stand by`, async () => (await readiness(b)) === 'standby', 60_000);
  return [a, b];
}

/** One version of the Lease as a watch saw it: times in microseconds since the epoch (MicroTime). */
interface LeaseRecord {
  /** '' when released. */
  holder: string;
  renewUs?: number;
  acquireUs?: number;
}

/** A MicroTime (`2006-01-02T15:04:05.000000Z`) in microseconds, exactly. */
function microseconds(time: string): number | undefined {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(time);
  if (!m?.[1]) return undefined;
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? '').padEnd(6, '0'));
}

/** Every version of the Lease, as a kubectl watch sees it. */
function watchLease(ns: string, lease: string): () => LeaseRecord[] {
  const watcher = spawn(plane().tools.kubectl, [
    `--kubeconfig=${plane().kubeconfigPath}`,
    'get',
    'lease',
    lease,
    '-n',
    ns,
    '--watch',
    '-o',
    'jsonpath={.spec.holderIdentity}|{.spec.renewTime}|{.spec.acquireTime}{"\\n"}',
  ]);
  watchers.push(watcher);
  let out = '';
  watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return () =>
    out
      .split('\n')
      .slice(0, -1)
      .map((line) => {
        const [holder = '', renew = '', acquire = ''] = line.split('|');
        const renewUs = microseconds(renew);
        const acquireUs = microseconds(acquire);
        return { holder, ...(renewUs !== undefined ? { renewUs } : {}), ...(acquireUs !== undefined ? { acquireUs } : {}) };
      });
}

/**
 * The hand-over from `from` to `to` in the Lease's own times: `from`'s last
 * renewal, and `to`'s acquisition. Both are written by the replicas, so
 * they say how long the Lease stayed with a leader that was gone, whatever
 * this test's own timing.
 */
function handOver(records: LeaseRecord[], from: string, to: string): { lastRenewUs: number; acquireUs: number; holders: string[] } {
  const taken = records.findIndex((r) => r.holder === to);
  const lastRenew = records
    .slice(0, Math.max(taken, 0))
    .reverse()
    .find((r) => r.holder === from);
  const acquireUs = records[taken]?.acquireUs;
  if (taken < 0 || lastRenew?.renewUs === undefined || acquireUs === undefined) {
    throw new Error(`no hand-over from ${from} to ${to} in the Lease's history: ${JSON.stringify(records)}`);
  }
  // The holders in order, repeats (renewals) collapsed.
  const holders = records
    .slice(0, taken + 1)
    .map((r) => r.holder)
    .filter((h, i, all) => i === 0 || h !== all[i - 1]);
  return { lastRenewUs: lastRenew.renewUs, acquireUs, holders };
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

  it(
    "hands leadership to the standby once the killed leader's lease has expired, never before, and the new leader schedules",
    async () => {
      const ns = 'leader-killed';
      await createBackend(plane(), ns);
      const [a, b] = await startPair(ns, 'lease-crash');
      const lease = watchLease(ns, 'lease-crash');
      await waitFor('the Lease watch to start', () => lease().length > 0);

      await a.kill();
      await waitFor('the standby to lead', async () => (await readiness(b)) === 'leader', TAKEOVER_DEADLINE_MS);
      await waitFor('the watch to see the new holder', () => lease().some((r) => r.holder === 'lease-crash-b'));
      expect(await holderOf(ns, 'lease-crash')).toBe('lease-crash-b');
      expect(await leading(b)).toBe(1);

      // A killed leader releases nothing: b took the Lease straight from a, and
      // only once a's last renewal was a whole lease duration old.
      const { lastRenewUs, acquireUs, holders } = handOver(lease(), 'lease-crash-a', 'lease-crash-b');
      expect(holders.slice(-2)).toEqual(['lease-crash-a', 'lease-crash-b']);
      expect(acquireUs - lastRenewUs).toBeGreaterThanOrEqual(LEASE_SECONDS * 1_000_000);

      await createVm(ns, 'vm-after-crash');
      await waitScheduled(ns, 'vm-after-crash');
      expect(await writes(b)).toBeGreaterThan(0);
    },
    2 * TAKEOVER_DEADLINE_MS,
  );

  it(
    'releases the Lease when the leader stops gracefully, so the standby takes over without waiting for expiry',
    async () => {
      const ns = 'leader-stopped';
      await createBackend(plane(), ns);
      const [a, b] = await startPair(ns, 'lease-release', RELEASE_LEASE_SECONDS);
      const lease = watchLease(ns, 'lease-release');
      await waitFor('the Lease watch to start', () => lease().length > 0);

      const exitCode = await a.stop();
      // A deadline past expiry, so that a standby which waited for it is
      // caught by the Lease's times below, not by this wait.
      await waitFor('the standby to lead', async () => (await readiness(b)) === 'leader', RELEASE_LEASE_SECONDS * 1000 + TAKEOVER_DEADLINE_MS);
      await waitFor('the watch to see the new holder', () => lease().some((r) => r.holder === 'lease-release-b'));

      expect(exitCode, a.logs()).toBe(0);
      expect(a.logs()).toContain('Released the lease');
      // a, then nobody (released), then b, while a's lease had not yet expired.
      const { lastRenewUs, acquireUs, holders } = handOver(lease(), 'lease-release-a', 'lease-release-b');
      expect(holders.slice(-3)).toEqual(['lease-release-a', '', 'lease-release-b']);
      expect(acquireUs - lastRenewUs).toBeLessThan(RELEASE_LEASE_SECONDS * 1_000_000);

      await createVm(ns, 'vm-after-stop');
      await waitScheduled(ns, 'vm-after-stop');
    },
    RELEASE_LEASE_SECONDS * 1000 + 3 * TAKEOVER_DEADLINE_MS,
  );
});
