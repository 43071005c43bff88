// The controller alone at scale, a case of `make bench` (`controller-scale`):
// BENCH_CONTROLLER_PROVIDERS Providers (default 1000) of BENCH_CONTROLLER_DOMAINS
// failure domains each (default 10), with their status written as a provider
// role would, and BENCH_CONTROLLER_VMS unscheduled VirtualMachines (default
// 10000), all written straight to a real kube-apiserver in one namespace before
// `banlieue controller` starts. No provider role runs: the machines the
// controller writes stay unprovisioned.
//
// It reports how long the controller takes to sync its caches and to place
// every VM (scheduler decisions per second), its RSS, and, after a restart with
// everything in place, the time to re-sync: until its caches are synced (its
// "Caches synced" log line) and until every VM was reconciled once and its
// queue is drained (banlieue_reconcile_total and workqueue_depth).
//
// A VMImage lists at most 512 Providers (status.perProvider): the Providers
// are split over as many images, and VMs take them in turn.
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { API_VERSION, CORE_GROUP } from '../../infra/api/kind.js';
import { auditOffset, countWrites, untilWritesSettle } from '../support/audit-writes.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { controllerArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { StopWaiting, waitFor } from '../support/wait.js';
import type { BenchCase } from './bench-case.js';
import { envInt, round, seconds, stopRole, tail } from './bench-stats.js';
import { fleetNames, listVirtualMachines } from './libvirt-fleet.js';
import { cpuSeconds } from './process-cpu.js';
import { processMemory } from './process-memory.js';
import type { Teardown } from './teardown.js';
import { textTable } from './text-table.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const NS = 'bench-controller';
const VM_CONTROLLER = 'virtualmachine';
/** Rows one VMImage's status.perProvider holds (its schema's maxItems). */
const PROVIDERS_PER_IMAGE = 500;
/** Writes the bench has in flight at once while filling the cache. */
const WRITERS = 32;
const POLL_MS = 2_000;

export const controllerScaleBench: BenchCase = {
  name: 'controller-scale',
  async run(teardown, say) {
    const vms = envInt('BENCH_CONTROLLER_VMS', 10_000);
    const providers = envInt('BENCH_CONTROLLER_PROVIDERS', 1000);
    const domains = envInt('BENCH_CONTROLLER_DOMAINS', 10);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 3600) * 1000;
    say('Starting kube-apiserver, etcd and kube-controller-manager');
    const cp = await ControlPlane.start(await buildTools());
    teardown.defer('control plane', () => cp.stop());
    await applyCrdsFromDist(cp);
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    // Not `banlieue/…`: the bench's own writes are not counted as banlieue's.
    const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
    const user = new ServerSideApply(api, 'banlieue-bench');
    const providerRole = new ServerSideApply(api, 'banlieue-bench-provider');

    say(`Writing ${providers} Providers × ${domains} failure domains with their status`);
    const providerNames = fleetNames('p', providers);
    const imageNames = Array.from({ length: Math.ceil(providers / PROVIDERS_PER_IMAGE) }, (_, i) => `bench-image-${i}`);
    await user.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await user.apply(vmClass());
    await user.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: NS },
      stringData: { username: 'bench', password: 'bench' },
    } as Obj);
    await inParallel(providerNames, async (name) => {
      await user.apply(provider(name));
      await providerRole.apply(
        { apiVersion: CORE, kind: 'Provider', metadata: { name, namespace: NS }, status: providerStatus(name, domains) },
        { subresource: 'status' },
      );
    });
    for (const [i, image] of imageNames.entries()) {
      const served = providerNames.slice(i * PROVIDERS_PER_IMAGE, (i + 1) * PROVIDERS_PER_IMAGE);
      await user.apply(vmImage(image));
      await providerRole.apply(
        {
          apiVersion: CORE,
          kind: 'VMImage',
          metadata: { name: image },
          status: { perProvider: served.map((p) => ({ providerNamespace: NS, providerName: p, ready: true })) },
        },
        { subresource: 'status' },
      );
    }
    say(`Writing ${vms} VirtualMachines`);
    const vmNames = fleetNames('vm-', vms);
    await inParallel(vmNames, (name, i) =>
      user.apply({
        apiVersion: CORE,
        kind: 'VirtualMachine',
        metadata: { name, namespace: NS },
        spec: { classRef: { name: 'bench-small' }, imageRef: { name: imageNames[i % imageNames.length] ?? '' } },
      }),
    );

    say('Starting banlieue controller');
    const from = auditOffset(cp.auditLogPath);
    const first = await timedStart(cp.kubeconfigPath, teardown);
    try {
      const synced = await untilLogged(first.role, 'Caches synced', timeoutMs);
      say(`caches synced after ${seconds(synced - first.startedAt)}; waiting for every VM to be placed`);
      const placedAt = await untilAllPlaced(api, vms, timeoutMs, say);
      const placing = { syncMs: synced - first.startedAt, placeMs: placedAt - synced, rssMiB: processMemory(first.role.child.pid).rssMiB };
      say(`all ${vms} placed after ${seconds(placing.placeMs)}; waiting for the controller's writes to settle`);
      const settled = await untilWritesSettle(cp.auditLogPath, from, 10_000, timeoutMs);
      const steady = {
        rssMiB: processMemory(first.role.child.pid).rssMiB,
        peakMiB: processMemory(first.role.child.pid).peakMiB,
        cpuSeconds: round(cpuSeconds(first.role.child.pid)),
        writes: Object.values(countWrites(cp.auditLogPath, from)).reduce((sum, w) => sum + w.total, 0),
        settled,
      };
      await stopRole(first.role);

      say('Restarting banlieue controller');
      const second = await timedStart(cp.kubeconfigPath, teardown);
      const resynced = await untilLogged(second.role, 'Caches synced', timeoutMs);
      const drained = await untilDrained(second.role, vms, timeoutMs);
      const restart = {
        syncMs: resynced - second.startedAt,
        drainedMs: drained - second.startedAt,
        rssMiB: processMemory(second.role.child.pid).rssMiB,
        cpuSeconds: round(cpuSeconds(second.role.child.pid)),
      };
      say(`re-synced after ${seconds(restart.syncMs)}, queue drained after ${seconds(restart.drainedMs)}`);
      const table = [
        `controller-scale: ${vms} VirtualMachines, ${providers} Providers × ${domains} failure domains in one namespace, controller alone`,
        textTable([
          ['', 'caches synced', 'all placed', 'decisions/s', 'RSS MiB', 'peak RSS MiB', 'CPU s', 'API writes/VM'],
          [
            'cold start',
            seconds(placing.syncMs),
            seconds(placing.placeMs),
            String(round(vms / (placing.placeMs / 1000))),
            `${placing.rssMiB} placed, ${steady.rssMiB} settled`,
            String(steady.peakMiB),
            String(steady.cpuSeconds),
            `${round(steady.writes / vms)}${steady.settled ? '' : ' (DID NOT SETTLE)'}`,
          ],
        ]),
        textTable([
          ['', 'caches synced', 'every VM reconciled, queue drained', 'RSS MiB', 'CPU s'],
          ['restart', seconds(restart.syncMs), seconds(restart.drainedMs), String(restart.rssMiB), String(restart.cpuSeconds)],
        ]),
      ].join('\n');
      return { table, result: { vms, providers, domains, placing, steady, restart, node: process.version } };
    } catch (err) {
      say(`--- controller log tail ---\n${tail(first.role.logs())}`);
      throw err;
    }
  },
};

/** Runs `write` over `items`, WRITERS at a time. */
async function inParallel<T>(items: readonly T[], write: (item: T, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      await write(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, worker));
}

async function timedStart(kubeconfig: string, teardown: Teardown): Promise<{ role: RoleProcess; startedAt: number }> {
  const startedAt = performance.now();
  const role = await startRole(controllerArgs(kubeconfig, NS));
  teardown.defer('controller', () => stopRole(role));
  return { role, startedAt };
}

/** When the role's log first showed `text` (performance.now() ms, to the poll). */
function untilLogged(role: RoleProcess, text: string, timeoutMs: number): Promise<number> {
  return waitFor(
    `the controller to log "${text}"`,
    () => {
      if (role.child.exitCode !== null) throw new StopWaiting(`the controller exited:\n${tail(role.logs())}`);
      return role.logs().includes(text) ? performance.now() : undefined;
    },
    timeoutMs,
  );
}

/** When every VirtualMachine, as the API server shows it, has a placement in status.scheduled. */
async function untilAllPlaced(api: KubeApi, count: number, timeoutMs: number, say: (m: string) => void): Promise<number> {
  let lastSaid = performance.now();
  return waitFor(
    `all ${count} VirtualMachines placed`,
    async () => {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const placed = (await listVirtualMachines(api, NS)).filter((vm) => vm.status?.scheduled !== undefined).length;
      if (performance.now() - lastSaid > 10_000) {
        say(`${placed} of ${count} placed`);
        lastSaid = performance.now();
      }
      return placed === count ? performance.now() : undefined;
    },
    timeoutMs,
  );
}

/** When the VirtualMachine controller has reconciled `count` keys and nothing is queued or in flight. */
function untilDrained(role: RoleProcess, count: number, timeoutMs: number): Promise<number> {
  return waitFor(
    'the controller to reconcile every VM and drain its queue',
    async () => {
      const reconciled = await role.metric('banlieue_reconcile_total', { controller: VM_CONTROLLER });
      const queued = await role.metric('workqueue_depth', { name: VM_CONTROLLER });
      const working = await role.metric('workqueue_unfinished_work_seconds', { name: VM_CONTROLLER });
      return reconciled >= count && queued === 0 && working === 0 ? performance.now() : undefined;
    },
    timeoutMs,
  );
}

function vmClass(): Obj {
  return {
    apiVersion: CORE,
    kind: 'VMClass',
    metadata: { name: 'bench-small' },
    spec: {
      hardware: { cpus: 1, memoryMiB: 512, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'fast' }] },
      network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
    },
  };
}

function vmImage(name: string): Obj {
  return {
    apiVersion: CORE,
    kind: 'VMImage',
    metadata: { name },
    spec: {
      osFamily: 'linux',
      osDistribution: 'debian',
      osVersion: '12',
      architecture: 'amd64',
      sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: 'debian.qcow2' }],
    },
  };
}

/** A libvirt Provider whose host nobody runs: only its published status matters here. */
function provider(name: string): Obj {
  return {
    apiVersion: CORE,
    kind: 'Provider',
    metadata: { name, namespace: NS },
    spec: {
      providerClassRef: { name: 'libvirt' },
      connection: { endpoint: `qemu+tls://${name}.invalid/system`, credentialsRef: { name: 'creds' } },
      capabilities: {
        storageClasses: [{ name: 'fast', target: { pool: 'default' } }],
        networkClasses: [{ name: 'lan', target: { network: 'default' } }],
      },
    },
  };
}

function providerStatus(name: string, domains: number): Record<string, unknown> {
  const failureDomains = Array.from({ length: domains }, (_, i) => ({
    name: `${name}-fd${i}`,
    labels: { name: `${name}-fd${i}` },
    attributes: { availableStorageClasses: ['fast'], availableNetworkClasses: ['lan'] },
    capacity: { cpus: 64, memoryMiB: 262_144, freeMemoryMiB: 262_144, storage: [{ target: 'default', freeGiB: 10_000, capacityGiB: 10_000 }] },
  }));
  return { failureDomains, failureDomainCount: domains };
}
