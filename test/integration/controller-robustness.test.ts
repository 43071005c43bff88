// The controller runtime against a real kube-apiserver that restarts, expires
// watches and sits idle: one `banlieue controller` process (no leader
// election) must ride it all out and, once converged, write nothing.
// This file runs its own control plane: it restarts the apiserver and reads a
// clean audit log.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRole, type RoleProcess } from '../support/controller-process.js';
import { freePort } from '../support/control-plane.js';
import { runningStatus } from '../support/fixtures.js';
import { waitFor } from '../support/wait.js';
import { applyObjects, createBackend, usePrivatePlane, patchStatus, virtualMachine } from '../support/private-plane-fixtures.js';

const VIRTUAL_MACHINES = 'virtualmachines.banlieue.io';
const VSPHERE_MACHINES = 'vspheremachines.infrastructure.banlieue.io';

interface Listed {
  items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[];
}

const { plane, track } = usePrivatePlane();

async function startController(...args: string[]): Promise<RoleProcess> {
  const controller = await startRole(['controller', '--kubeconfig', plane().kubeconfigPath, '--no-leader-elect', ...args]);
  track(controller);
  return controller;
}

async function list(resource: string, ns: string): Promise<Listed['items']> {
  return (JSON.parse(await plane().kubectl(['get', resource, '-n', ns, '-o', 'json'])) as Listed).items;
}

const hasCondition = (obj: Listed['items'][number], type: string, status: string): boolean =>
  obj.status?.conditions?.some((c) => c.type === type && c.status === status) ?? false;

/** Wait until the VM is Scheduled=True and its VSphereMachine exists. */
async function waitScheduled(ns: string, name: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `VirtualMachine ${ns}/${name} to be Scheduled with its VSphereMachine`,
    async () => {
      const vm = (await list(VIRTUAL_MACHINES, ns)).find((o) => o.metadata.name === name);
      const machine = (await list(VSPHERE_MACHINES, ns)).find((o) => o.metadata.name === name);
      return !!vm && hasCondition(vm, 'Scheduled', 'True') && !!machine;
    },
    timeoutMs,
  );
}

/** Messages the controller logged, in order (a line still being written is skipped). */
const logged = (p: RoleProcess): string[] =>
  p
    .logs()
    .split('\n')
    .flatMap((l) => {
      try {
        return [(JSON.parse(l) as { msg: string }).msg];
      } catch {
        return [];
      }
    });

describe('controller robustness against a real kube-apiserver', () => {
  it('resumes its watches after kube-apiserver restarts and schedules new VMs without restarting itself', async () => {
    const ns = 'apiserver-restart';
    await createBackend(plane(), ns);
    const controller = await startController();
    await applyObjects(plane(), [virtualMachine(ns, 'before')]);
    await waitScheduled(ns, 'before');
    const startedAt = await controller.metric('process_start_time_seconds');

    await plane().restartApiserver();
    await applyObjects(plane(), [virtualMachine(ns, 'after')]);

    // Its backoff may have grown while the apiserver was down: allow for it.
    await waitScheduled(ns, 'after', 90_000);
    expect(controller.child.exitCode, controller.logs()).toBeNull();
    expect(controller.child.signalCode).toBeNull();
    expect(await controller.metric('process_start_time_seconds')).toBe(startedAt);
    const messages = logged(controller);
    expect(messages.filter((m) => m === 'Serving health and metrics')).toHaveLength(1);
    expect(messages.filter((m) => m === 'Caches synced; reconciling')).toHaveLength(1);
    expect(messages, controller.logs()).toContain('Watch failed, restarting');
    expect(await controller.health('/readyz')).toEqual([200, 'leader']);
  });

  it('relists when its watch resourceVersion has expired (410 Gone) and still converges', async () => {
    const ns = 'watch-expired';
    await createBackend(plane(), ns);
    const controller = await startController();
    await applyObjects(plane(), [virtualMachine(ns, 'before')]);
    await waitScheduled(ns, 'before');

    // Writes the controller does not watch move etcd's revision past every
    // resourceVersion it holds; the restarted apiserver's fresh watch cache
    // starts at the new revision and cannot serve the old ones.
    const configMaps = Array.from({ length: 100 }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `churn-${i}`, namespace: ns },
      data: { i: String(i) },
    }));
    await applyObjects(plane(), configMaps);
    await plane().restartApiserver();

    await waitFor('the controller to log "Watch expired, relisting"', () => logged(controller).includes('Watch expired, relisting'), 90_000);
    await applyObjects(plane(), [virtualMachine(ns, 'after')]);
    await waitScheduled(ns, 'after', 90_000);
    expect(controller.child.exitCode, controller.logs()).toBeNull();
  });

  it('makes zero API writes in a steady state of 50 Ready VMs, through several resyncs', async () => {
    const ns = 'steady-state';
    const count = 50;
    const resyncSeconds = 10;
    await createBackend(plane(), ns, ['fd-a', 'fd-b', 'fd-c']);
    const controller = await startController('--resync-period', String(resyncSeconds));
    const names = Array.from({ length: count }, (_, i) => `vm-${String(i).padStart(2, '0')}`);
    await applyObjects(
      plane(),
      names.map((n) => virtualMachine(ns, n)),
    );
    await waitFor(`${count} VSphereMachines`, async () => (await list(VSPHERE_MACHINES, ns)).length === count, 120_000);

    // Play the vSphere provider: every machine comes up.
    for (let i = 0; i < count; i += 10) {
      await Promise.all(names.slice(i, i + 10).map((n, j) => patchStatus(plane(), VSPHERE_MACHINES, ns, n, runningStatus(`192.0.2.${10 + i + j}`))));
    }
    await waitFor(
      `all ${count} VirtualMachines Ready`,
      async () => (await list(VIRTUAL_MACHINES, ns)).filter((vm) => hasCondition(vm, 'Ready', 'True')).length === count,
      120_000,
    );

    // Quiet: no write for longer than a resync period (every VM reconciled at least once since).
    const writes = (): Promise<number> => controller.metric('banlieue_api_writes_total');
    let last = { value: await writes(), since: Date.now() };
    await waitFor(
      'the controller to stop writing',
      async () => {
        const value = await writes();
        if (value !== last.value) last = { value, since: Date.now() };
        return Date.now() - last.since > (resyncSeconds + 2) * 1000;
      },
      120_000,
    ).catch((err: unknown) => {
      const latest = auditedWrites(plane().auditLogPath).slice(-5).map(describeWrite);
      throw new Error(`${err instanceof Error ? err.message : String(err)}; its latest writes: ${latest.join(', ')}`);
    });

    // The window: at least 30 s, and at least two resyncs of every VM.
    const reconciles = (): Promise<number> => controller.metric('banlieue_reconcile_total', { controller: 'virtualmachine' });
    const [writesBefore, reconcilesBefore, start] = [await writes(), await reconciles(), new Date()];
    await waitFor(
      '30 s spanning two resyncs',
      async () => Date.now() - start.getTime() >= 30_000 && (await reconciles()) - reconcilesBefore >= 2 * count,
      90_000,
    );
    const [writesAfter, reconcilesAfter, end] = [await writes(), await reconciles(), new Date()];

    const ours = auditedWrites(plane().auditLogPath);
    expect(ours.filter((e) => e.at < start).length, 'the audit log shows the controller writing while converging').toBeGreaterThan(0);
    const inWindow = ours.filter((e) => e.at >= start && e.at <= end);
    expect(inWindow.map(describeWrite)).toEqual([]);
    expect(writesAfter - writesBefore).toBe(0);
    expect(reconcilesAfter - reconcilesBefore).toBeGreaterThanOrEqual(2 * count);
  }, 240_000);
});

interface AuditEvent {
  stage: string;
  verb: string;
  userAgent?: string;
  stageTimestamp: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
}

interface AuditedWrite {
  at: Date;
  verb: string;
  resource: string;
  name: string;
}

const describeWrite = (w: AuditedWrite): string => `${w.verb} ${w.resource} ${w.name}`;

/** Completed writes by any banlieue process, from the apiserver's audit log. */
function auditedWrites(path: string): AuditedWrite[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete' && e.userAgent?.startsWith('banlieue/'))
    .map((e) => {
      const ref = e.objectRef ?? {};
      const resource = ref.subresource ? `${ref.resource ?? ''}/${ref.subresource}` : (ref.resource ?? '');
      return { at: new Date(e.stageTimestamp), verb: e.verb, resource, name: `${ref.namespace ?? ''}/${ref.name ?? ''}` };
    });
}

describe('a machine kind the API server does not serve', () => {
  it('does not hold up the deletion of VMs: their objects of that kind are read by name, and absent', async () => {
    const ns = 'kind-missing';
    // An install without one backend's CRDs: that kind's informer never syncs.
    await plane().kubectl(['delete', 'crd', 'cloudhypervisormachines.infrastructure.banlieue.io']);
    await createBackend(plane(), ns);
    const controller = await startController();
    await applyObjects(plane(), [virtualMachine(ns, 'doomed')]);
    await waitScheduled(ns, 'doomed');

    await plane().kubectl(['delete', 'virtualmachine', 'doomed', '-n', ns, '--wait=false']);
    await waitFor('the VirtualMachine to be deleted', async () => !(await list(VIRTUAL_MACHINES, ns)).some((o) => o.metadata.name === 'doomed'), 60_000);
    expect((await list(VSPHERE_MACHINES, ns)).map((o) => o.metadata.name)).toEqual([]);
    expect(controller.child.exitCode).toBeNull();
  });
});

describe('shutdown', () => {
  it.each([['controller'], ['provider', 'vsphere']])('`banlieue %s` exits on SIGTERM even when the API server never answered', async (...role) => {
    const dir = mkdtempSync(join(tmpdir(), 'banlieue-unreachable-'));
    try {
      // Nothing listens on this port: the informers never sync.
      const kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(
        kubeconfig,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          'current-context': 'x',
          clusters: [{ name: 'x', cluster: { server: `https://127.0.0.1:${await freePort()}`, 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'x', user: { token: 'unused' } }],
          contexts: [{ name: 'x', context: { cluster: 'x', user: 'x' } }],
        }),
      );
      const process = await startRole([...role, '--kubeconfig', kubeconfig, '--no-leader-elect']);
      await waitFor('a failed watch', () => (process.logs().includes('Watch failed') ? true : undefined), 30_000);
      const code = await Promise.race([process.stop(), new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
      if (code === 'still running') await process.kill();
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
