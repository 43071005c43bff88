// The libvirt case of `make bench`: VirtualMachines end to end on libvirt,
// created at once, Ready, deleted, through a real kube-apiserver with `banlieue
// controller` and `banlieue provider libvirt` as processes, on two hosts:
//
// - a private libvirtd's test driver (BENCH_VMS, default 50): the provider's
//   own cost per machine, with libvirt answering at once;
// - real guests (BENCH_LIBVIRT_GUESTS, default 3): the test guest booted under
//   TCG by a private QEMU libvirtd on its own bridge and DHCP (qemu-host.ts).
//   There a VM counts as up once the guest reports, on the serial console the
//   provider logs, the address it took: the machine cannot be Ready (its NIC
//   is on the plain bridge br0, which no libvirt address source sees here:
//   libvirt 9.0's ARP source fails and there is no guest agent; only NICs on a
//   libvirt network, as in test/integration/libvirt-guests.test.ts with
//   qemu-host.ts's guestLibvirtNetworkXml, get their address from its leases).
//
// Per host it reports time to all Ready (and p50/p95 per VM), time to all
// gone, API writes per VM (audit log), libvirt calls per VM (the provider's
// banlieue_backend_calls_total, by procedure) and RSS; it asserts nothing about
// speed, only that no domain and no volume of the bench is left.
import { KubeConfig } from '@kubernetes/client-node';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { StoragePool } from '../../controller/backends/libvirt/client/handles.js';
import { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { API_VERSION, CORE_GROUP, INFRA_GROUP } from '../../infra/api/kind.js';
import { ensureGuestDisk } from '../peers/libvirt/guest-disk.js';
import { readGuestReport } from '../peers/libvirt/guest/guest-init.js';
import { GUEST_NETWORK, startQemuHost } from '../peers/libvirt/qemu-host.js';
import { buildTools, ControlPlane } from '../support/control-plane.js';
import { providerRoleArgs, startRole, type RoleProcess } from '../support/controller-process.js';
import { applyCrdsFromDist } from '../support/crds.js';
import type { Obj } from '../support/fixtures.js';
import { type LibvirtWorld } from '../support/libvirt/world.js';
import { waitFor } from '../support/wait.js';
import { auditOffset, countWrites, untilWritesSettle, type WriteCounts } from '../support/audit-writes.js';
import type { BenchCase, BenchReport } from './bench-case.js';
import { createFleetAndAwaitUp, fleetNames, isReady, listVirtualMachines, startTestDriverHost, upTimesMs, vmRef, type FleetTimes } from './libvirt-fleet.js';
import { envInt, percentiles, round, seconds, stopRole, tail } from './bench-stats.js';
import { processMemory } from './process-memory.js';
import { textTable } from './text-table.js';
import type { Teardown } from './teardown.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const INFRA = `${INFRA_GROUP}/${API_VERSION}`;
const PREFIX = 'bench-lv-';
const QUIET_MS = 5_000;

/** One host the fleet runs on: its client, pool and the user's objects, set up and registered on the teardown. */
interface Host {
  readonly label: string;
  readonly ns: string;
  readonly client: LibvirtClient;
  readonly pool: StoragePool;
  readonly world: LibvirtWorld;
  /** What "up" means for a VM of this host. @default its VirtualMachine is Ready */
  readonly upWhen?: { readonly label: string; readonly isUp: (vm: Obj) => boolean };
}

interface Roles {
  readonly controller: RoleProcess;
  readonly provider: RoleProcess;
}

interface Phase {
  readonly durationMs: number;
  readonly writes: WriteCounts;
  readonly settled: boolean;
  readonly libvirtCalls: Record<string, number>;
  readonly rssMiB: { readonly controller: number; readonly provider: number };
}

interface FleetResult {
  readonly label: string;
  /** What "up" meant: Ready, or the guest's own report. */
  readonly up: string;
  readonly vms: number;
  readonly created: Phase;
  readonly perVmReadyMs: number[];
  readonly deleted: Phase;
  readonly peakRssMiB: { readonly controller: number; readonly provider: number };
}

export const libvirtBench: BenchCase = {
  name: 'libvirt',
  async run(teardown, say) {
    const n = envInt('BENCH_VMS', 50);
    const guests = envInt('BENCH_LIBVIRT_GUESTS', 3);
    const timeoutMs = envInt('BENCH_TIMEOUT_S', 900) * 1000;
    say('Starting kube-apiserver, etcd and kube-controller-manager');
    const cp = await ControlPlane.start(await buildTools());
    teardown.defer('control plane', () => cp.stop());
    await applyCrdsFromDist(cp);
    const kc = new KubeConfig();
    kc.loadFromFile(cp.kubeconfigPath);
    // Not `banlieue/…`: the bench's own writes are not counted as banlieue's.
    const api = new KubeApi(kc, { userAgent: 'banlieue-bench' });
    const user = new ServerSideApply(api, 'banlieue-bench');
    const fleet = async (host: Host, count: number): Promise<FleetResult> => {
      for (const obj of [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: host.ns } },
        host.world.secret,
        host.world.provider,
        host.world.vmClass,
        host.world.vmImage,
      ] as Obj[])
        await user.apply(obj);
      say(`${host.label}: starting banlieue controller and banlieue provider libvirt`);
      const roles = await startRoles(cp.kubeconfigPath, host.ns, teardown);
      try {
        await waitFor(`Provider of ${host.label} Ready`, async () => isReady(await api.get<Obj>(host.world.provider)), 120_000);
        return await runFleet({ api, user, cp, host, roles, count, timeoutMs, say });
      } catch (err) {
        say(`--- provider-libvirt log tail ---\n${tail(roles.provider.logs())}\n--- controller log tail ---\n${tail(roles.controller.logs())}`);
        throw err;
      } finally {
        await stopRole(roles.controller);
        await stopRole(roles.provider);
      }
    };
    const results = [await fleet(await testDriverHost(teardown, say), n), await fleet(await tcgHost(teardown, say), guests)];
    return report(results);
  },
};

/** libvirtd's test driver in a private mount namespace, reached over mutual TLS. */
async function testDriverHost(teardown: Teardown, say: (m: string) => void): Promise<Host> {
  say('Starting libvirtd (test driver)');
  const ns = 'bench-libvirt';
  return { label: 'test driver', ns, ...(await startTestDriverHost(teardown, ns, 'kvm1')) };
}

/** A private QEMU libvirtd booting the test guest under TCG, its image in a directory pool. */
async function tcgHost(teardown: Teardown, say: (m: string) => void): Promise<Host> {
  say('Building the test guest (cached) and starting a QEMU libvirtd with its bridge and DHCP');
  const guest = await ensureGuestDisk();
  const qemu = await startQemuHost();
  teardown.defer('QEMU host', () => qemu.stop());
  const client = await LibvirtClient.connect({ uri: qemu.uri });
  teardown.defer('QEMU host connection', () => client.close());
  mkdirSync(join(qemu.dir, 'pool'));
  const pool = await client.pools.createTransient(`<pool type='dir'><name>guests</name><target><path>${join(qemu.dir, 'pool')}</path></target></pool>`);
  const image = 'bench-guest.img';
  const volume = await client.volumes.create(
    pool,
    `<volume><name>${image}</name><capacity unit='bytes'>${statSync(guest.disk).size}</capacity><target><format type='raw'/></target></volume>`,
  );
  await client.volumes.upload(volume, readFileSync(guest.disk));
  const ns = 'bench-libvirt-tcg';
  const world: LibvirtWorld = {
    secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'host-creds', namespace: ns }, stringData: {} },
    provider: {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'tcg-host', namespace: ns },
      spec: {
        providerClassRef: { name: 'libvirt' },
        connection: { endpoint: qemu.uri, credentialsRef: { name: 'host-creds' } },
        libvirt: { domainType: 'qemu' },
        capabilities: {
          storageClasses: [{ name: 'local', target: { pool: 'guests' } }],
          networkClasses: [{ name: 'lan', target: { bridge: GUEST_NETWORK.bridge } }],
        },
      },
    },
    vmClass: {
      apiVersion: CORE,
      kind: 'VMClass',
      metadata: { name: 'bench-tcg-tiny' },
      spec: {
        hardware: { cpus: 1, memoryMiB: 256, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'local' }] },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    vmImage: {
      apiVersion: CORE,
      kind: 'VMImage',
      metadata: { name: 'bench-test-guest' },
      spec: {
        osFamily: 'linux',
        osDistribution: 'busybox',
        osVersion: '1',
        architecture: 'amd64',
        sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: image }],
      },
    },
  };
  // The guest's report on its console, which the provider logs beside QEMU's logs.
  const consoleOf = (name: string): string => {
    try {
      return readFileSync(join(qemu.qemuLogDir, `${ns}-${name}-console.log`), 'utf8');
    } catch {
      return '';
    }
  };
  return {
    label: 'QEMU/TCG guests',
    ns,
    client,
    pool,
    world,
    upWhen: { label: 'guest reports its address', isUp: (vm) => readGuestReport(consoleOf(vm.metadata.name)).has('address') },
  };
}

async function startRoles(kubeconfig: string, ns: string, teardown: Teardown): Promise<Roles> {
  const controller = await startRole(['controller', '--kubeconfig', kubeconfig, '--no-leader-elect', '--namespace', ns]);
  teardown.defer('controller', () => stopRole(controller));
  const provider = await startRole(providerRoleArgs('libvirt', kubeconfig, ns, 5));
  teardown.defer('provider', () => stopRole(provider));
  return { controller, provider };
}

interface FleetRun {
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly cp: ControlPlane;
  readonly host: Host;
  readonly roles: Roles;
  readonly count: number;
  readonly timeoutMs: number;
  readonly say: (m: string) => void;
}

/** Creates `count` VirtualMachines at once, waits for all Ready, deletes them all, checks the host holds none of their domains or volumes. */
async function runFleet(run: FleetRun): Promise<FleetResult> {
  const { api, user, cp, host, roles, count, timeoutMs, say } = run;
  const names = fleetNames(PREFIX, count);
  const upLabel = host.upWhen?.label ?? 'Ready';
  let peak = { controller: 0, provider: 0 };
  const rss = (): Phase['rssMiB'] => {
    const now = { controller: processMemory(roles.controller.child.pid).rssMiB, provider: processMemory(roles.provider.child.pid).rssMiB };
    peak = {
      controller: Math.max(peak.controller, processMemory(roles.controller.child.pid).peakMiB),
      provider: Math.max(peak.provider, processMemory(roles.provider.child.pid).peakMiB),
    };
    return now;
  };
  const phase = async (body: () => Promise<void>): Promise<Phase> => {
    const from = auditOffset(cp.auditLogPath);
    const before = await libvirtCalls(roles.provider);
    const start = performance.now();
    await body();
    const durationMs = performance.now() - start;
    const rssMiB = rss();
    const settled = await untilWritesSettle(cp.auditLogPath, from, QUIET_MS, 60_000);
    const after = await libvirtCalls(roles.provider);
    const libvirtCallsDelta = Object.fromEntries(
      Object.entries(after)
        .map(([m, k]) => [m, k - (before[m] ?? 0)])
        .filter(([, k]) => k !== 0),
    );
    return { durationMs, writes: countWrites(cp.auditLogPath, from), settled, libvirtCalls: libvirtCallsDelta, rssMiB };
  };

  let times: FleetTimes | undefined;
  const createdPhase = await phase(async () => {
    times = await createFleetAndAwaitUp({
      api,
      user,
      ns: host.ns,
      names,
      vmClass: host.world.vmClass.metadata.name,
      vmImage: host.world.vmImage.metadata.name,
      label: host.label,
      timeoutMs,
      say,
      ...(host.upWhen ? { isUp: host.upWhen.isUp, upLabel } : {}),
    });
  });
  say(`${host.label}: all ${count} up (${upLabel}) after ${seconds(createdPhase.durationMs)}`);
  const deletedPhase = await phase(async () => {
    await Promise.all(names.map(async (name) => api.request('DELETE', await api.pathOf(vmRef(host.ns, name)))));
    await waitFor(
      'every VirtualMachine and LibvirtMachine to be gone',
      async () => (await listVirtualMachines(api, host.ns)).length + (await list(api, INFRA, 'LibvirtMachine', host.ns)).length === 0,
      timeoutMs,
    );
  });
  say(`${host.label}: all ${count} gone after ${seconds(deletedPhase.durationMs)}`);
  const domainsLeft = (await host.client.domains.list()).filter((d) => d.name.startsWith(`${host.ns}-${PREFIX}`));
  // A `pool/volume` ref names its volume last.
  const image = String(host.world.vmImage.spec?.sources[0].ref).split('/').pop();
  const volumesLeft = (await host.client.pools.listVolumes(host.pool)).filter((v) => v.name !== image);
  if (domainsLeft.length + volumesLeft.length > 0) {
    throw new Error(`${host.label}: left behind: ${[...domainsLeft.map((d) => `domain ${d.name}`), ...volumesLeft.map((v) => `volume ${v.name}`)].join(', ')}`);
  }
  return {
    label: host.label,
    up: upLabel,
    vms: count,
    created: createdPhase,
    perVmReadyMs: times ? upTimesMs(times, names) : [],
    deleted: deletedPhase,
    peakRssMiB: peak,
  };
}

/** The provider's banlieue_backend_calls_total for libvirt, by procedure. */
async function libvirtCalls(provider: RoleProcess): Promise<Record<string, number>> {
  const res = await fetch(`http://127.0.0.1:${provider.metricsPort}/metrics`);
  const byMethod: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const match = /^banlieue_backend_calls_total\{[^}]*method="([^"]+)"[^}]*\} (\S+)$/.exec(line);
    if (match?.[1] !== undefined) byMethod[match[1]] = (byMethod[match[1]] ?? 0) + Number(match[2]);
  }
  return byMethod;
}

function report(results: readonly FleetResult[]): BenchReport {
  const total = (w: WriteCounts): number => Object.values(w).reduce((sum, r) => sum + r.total, 0);
  const calls = (c: Record<string, number>): number => Object.values(c).reduce((a, b) => a + b, 0);
  const rows = results.map((r) => ({
    host: r.label,
    up: r.up,
    vms: r.vms,
    timeToAllReadyMs: Math.round(r.created.durationMs),
    perVmReadyMs: percentiles(r.perVmReadyMs),
    timeToAllGoneMs: Math.round(r.deleted.durationMs),
    apiWritesPerVm: { create: round(total(r.created.writes) / r.vms), delete: round(total(r.deleted.writes) / r.vms) },
    apiWrites: { create: r.created.writes, delete: r.deleted.writes },
    writesSettled: { create: r.created.settled, delete: r.deleted.settled },
    libvirtCallsPerVm: { create: round(calls(r.created.libvirtCalls) / r.vms), delete: round(calls(r.deleted.libvirtCalls) / r.vms) },
    libvirtCallsByProcedure: { create: r.created.libvirtCalls, delete: r.deleted.libvirtCalls },
    rssMiB: { allReady: r.created.rssMiB, allGone: r.deleted.rssMiB, peak: r.peakRssMiB },
  }));
  const table = [
    'libvirt: VirtualMachines created at once, Ready, deleted (banlieue controller + provider libvirt, --poll-period 1)',
    textTable([
      [
        '',
        'VMs',
        'up when',
        'all up',
        'p50 up',
        'p95 up',
        'all gone',
        'API writes/VM (create, delete)',
        'libvirt calls/VM (create, delete)',
        'RSS MiB peak (controller, provider)',
      ],
      ...rows.map((r) => [
        r.host,
        String(r.vms),
        r.up,
        seconds(r.timeToAllReadyMs),
        seconds(r.perVmReadyMs.p50),
        seconds(r.perVmReadyMs.p95),
        seconds(r.timeToAllGoneMs),
        `${r.apiWritesPerVm.create}, ${r.apiWritesPerVm.delete}${r.writesSettled.create && r.writesSettled.delete ? '' : ' (DID NOT SETTLE)'}`,
        `${r.libvirtCallsPerVm.create}, ${r.libvirtCallsPerVm.delete}`,
        `${r.rssMiB.peak.controller}, ${r.rssMiB.peak.provider}`,
      ]),
    ]),
  ].join('\n');
  return { table, result: { hosts: rows, node: process.version } };
}

async function list(api: KubeApi, apiVersion: string, kind: string, namespace: string): Promise<Obj[]> {
  return (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion, kind, metadata: { namespace } }))).items;
}
