// The Cloud Hypervisor world of `make test-faults`: a test host of the run's
// own (temp directories, a network namespace with a bridge, the host config:
// test/support/cloud-hypervisor/host.ts) whose VMM is the spec-validated
// simulator, with vm.create and vm.boot answered slowly so that kills land
// while a machine's VMM is started but its VM not yet created or booted.
// `banlieue provider cloud-hypervisor --provider <it>` runs as on a host (its
// host config from BANLIEUE_CH_HOST_CONFIG); both replicas serve the one host.
// The "backend" of a host agent is its VMMs: a freeze stops every VMM process
// (SIGSTOP) until resume. The host itself stays reachable, so the outage shows
// on the machines whose VMMs hang, not on the Provider (outageShownOn).
// The guest's side is played by the run: once a machine's VMM runs, its DHCP
// guest "answers ARP" (a neighbour entry on the bridge, where the provider
// reads guest addresses from).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readHostProcess } from '../../controller/backends/cloud-hypervisor/host-process.js';
import { IpLinks } from '../../controller/backends/cloud-hypervisor/host/ip-links.js';
import { derivedMac } from '../../controller/backends/cloud-hypervisor/machine/nic-identity.js';
import { readRecord } from '../../controller/backends/cloud-hypervisor/machine/machine-record.js';
import { OS_DISK } from '../../controller/backends/cloud-hypervisor/machine/os-disk.js';
import { parseOwnerMark } from '../../controller/backends/cloud-hypervisor/machine/sweep.js';
import { listMachineUuids, vmmPaths } from '../../controller/backends/cloud-hypervisor/state-dir.js';
import { providerLeaseName } from '../../controller/cli/controller-command.js';
import { processesMentioning, simulatorPeer } from '../peers/cloud-hypervisor/vmm-peers.js';
import { chProvider, chWorld, createTestHost, hostConfigEnv, TEST_BRIDGE, type TestHost } from '../support/cloud-hypervisor/host.js';
import type { Obj } from '../support/fixtures.js';
import type { FaultWorld, StartFaultWorld } from './fault-world.js';
import type { BackendVm } from './fleet-check.js';

/** vm.create and vm.boot answers held this long (each under the provider's 10 s call deadline): a creation takes their sum. */
const DELAYS_MS = { 'vm.create': 3_000, 'vm.boot': 4_000 };
const PROVIDER = 'host-a';

export const startCloudHypervisorFaultWorld: StartFaultWorld = async (teardown, { namespace, names, say }) => {
  say(`Starting a Cloud Hypervisor test host (simulated VMMs, vm.create ${DELAYS_MS['vm.create'] / 1000} s, vm.boot ${DELAYS_MS['vm.boot'] / 1000} s)`);
  // The ACPI guest powers off at the power button: a deletion does not wait out the grace period.
  const host = await createTestHost(simulatorPeer, { simulator: { guest: 'acpi', delaysMs: DELAYS_MS } });
  // Every VMM process, disk, tap and the namespace go, frozen or not, whatever the run's end.
  teardown.defer('Cloud Hypervisor test host', () => host.remove());
  const world = chWorld(namespace, host, 'faults');
  const provider = chProvider(namespace, host, PROVIDER);
  // DHCP: the address is read from the bridge's neighbour table, which playGuest fills.
  const vmClass: Obj = { ...world.vmClass, spec: { ...world.vmClass.spec, network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] } } };
  const frozen = new Set<number>();
  const neighbours = new IpLinks(host.netns);
  const faultWorld: FaultWorld = {
    title: 'cloud-hypervisor on simulated VMMs',
    peer: 'VMMs',
    machineKind: 'CloudHypervisorMachine',
    providerLease: providerLeaseName('cloud-hypervisor', PROVIDER),
    provider,
    objects: [provider, vmClass, world.vmImage],
    vmClassName: vmClass.metadata.name,
    vmImageName: world.vmImage.metadata.name,
    cloneMs: DELAYS_MS['vm.create'] + DELAYS_MS['vm.boot'],
    // Resynced often: a converged machine must meet its hung VMM within the outage to say so.
    // The replicas read the host config from their environment, as the systemd unit sets it on a host.
    providerEnv: hostConfigEnv(host),
    providerArgs: [
      'provider',
      'cloud-hypervisor',
      '--provider',
      PROVIDER,
      '--poll-period',
      '1',
      '--rediscover-period',
      '5',
      '--discover-timeout',
      '8',
      '--resync-period',
      '10',
    ],
    outageShownOn: 'machines',
    uuidOf: uuidOfProviderID,
    backendVms: () => hostVms(host),
    freeze: () => {
      for (const pid of vmmPids(host)) if (signal(pid, 'SIGSTOP')) frozen.add(pid);
    },
    resume: () => {
      for (const pid of frozen) signal(pid, 'SIGCONT');
      frozen.clear();
    },
    peerProblems: () =>
      host
        .violations()
        .slice(0, 5)
        .map((v) => `VMM simulator: ${v.method} ${v.path}: ${v.problems.join('; ')}`),
    async playGuest(machines: readonly Obj[]) {
      try {
        await answerArp(host, neighbours, names, machines);
      } catch (error) {
        // The run retries each round; said, so that a guest never played is not a mystery.
        say(`  playing the guests failed: ${String(error)}`);
      }
    },
  };
  return faultWorld;
};

/**
 * Each running machine's DHCP guest answers ARP: a neighbour entry for its first NIC's MAC on the
 * bridge (`10.41.0.<index + 1>`). Looked up anew each round, not remembered: the test bridge has no
 * MAC of its own, so it takes its ports' lowest, and a tap coming or going can change it, which
 * flushes its neighbour table (a real guest would ARP again; this one is told to).
 */
async function answerArp(host: TestHost, neighbours: IpLinks, names: readonly string[], machines: readonly Obj[]): Promise<void> {
  const answering = new Set((await neighbours.neighbours()).map((n) => n.mac));
  const running = new Set((await hostVms(host)).filter((vm) => vm.running).map((vm) => vm.uuid));
  for (const m of machines) {
    const providerID = m.spec?.providerID;
    const index = names.indexOf(m.metadata.name);
    if (typeof providerID !== 'string' || index < 0) continue;
    const uuid = uuidOfProviderID(providerID);
    const mac = derivedMac(uuid, 0);
    if (!running.has(uuid) || answering.has(mac)) continue;
    await host.ip(['neigh', 'replace', `10.41.0.${index + 1}`, 'lladdr', mac, 'dev', TEST_BRIDGE, 'nud', 'permanent']);
  }
}

/** The UUID a `cloudhypervisor://<uuid>` providerID names, lower case. */
function uuidOfProviderID(providerID: string): string {
  return providerID.replace(/^cloudhypervisor:\/\//, '').toLowerCase();
}

interface HostVm extends BackendVm {
  /** A VMM process serves it. */
  readonly running: boolean;
}

/**
 * What the host holds of the run's machines, by UUID: one entry per VMM process
 * (two for one machine are a duplicate), and one for a machine directory, OS disk
 * or tap with no VMM (what a deletion left is an orphan). Named by the machine
 * its record's ownership mark names; its id is its OS disk's (osDiskId).
 */
async function hostVms(host: TestHost): Promise<HostVm[]> {
  const root = host.config.stateRoot;
  const vmms = new Map<string, number>();
  // `--api-socket path=<root>/<uuid>/api.sock` (vmm-process.ts).
  const socketArg = /^path=(.*)\/([0-9a-f-]{36})\/api\.sock$/;
  for (const pid of vmmPids(host)) {
    const uuid = (await readHostProcess(pid))?.argv.map((arg) => socketArg.exec(arg)).find((m) => m?.[1] === root)?.[2];
    if (uuid !== undefined) vmms.set(uuid, (vmms.get(uuid) ?? 0) + 1);
  }
  const disks = Object.values(host.config.storageClasses).flatMap((dir) => listDir(dir).filter((name) => /^[0-9a-f-]{36}$/.test(name)));
  const uuids = new Set([...(await listMachineUuids(root)), ...vmms.keys(), ...disks]);
  const vms: HostVm[] = [];
  for (const uuid of uuids) {
    const record = existsSync(join(root, uuid)) ? await readRecord(vmmPaths(root, uuid)).catch(() => undefined) : undefined;
    const owner = record?.owner;
    const name = (owner !== undefined ? parseOwnerMark(owner)?.name : undefined) ?? `(no record) ${uuid}`;
    const processes = vmms.get(uuid) ?? 0;
    const instance = osDiskId(host, uuid);
    for (let i = 0; i < Math.max(1, processes); i++) vms.push({ name, uuid, running: processes > 0, ...(instance === undefined ? {} : { instance }) });
  }
  // Taps are named after the first 10 hex digits of their machine's UUID (nic-identity.ts).
  const known = [...uuids].map((u) => u.replaceAll('-', '').slice(0, 10));
  for (const link of await host.links()) {
    const prefix = /^bch([0-9a-f]{10})[0-9a-f]$/.exec(link)?.[1];
    if (prefix !== undefined && !known.includes(prefix)) vms.push({ name: `tap ${link}`, uuid: `tap ${link}`, running: false });
  }
  return vms;
}

/**
 * The machine's OS disk (`<storage class directory>/<uuid>/os.qcow2`) by inode and birth time: the
 * VM's disk, which a VM made again has anew (a VMM restarted or adopted keeps it; growing it keeps
 * it). Undefined while there is none.
 */
function osDiskId(host: TestHost, uuid: string): string | undefined {
  for (const dir of Object.values(host.config.storageClasses)) {
    try {
      const disk = statSync(join(dir, uuid, OS_DISK));
      return `OS disk inode ${disk.ino} born ${disk.birthtime.toISOString()}`;
    } catch {
      // Not in this storage class.
    }
  }
  return undefined;
}

/** The pids of the host's VMM processes (the simulator's, run through its wrapper, are node). */
function vmmPids(host: TestHost): number[] {
  return processesMentioning(`path=${host.config.stateRoot}/`);
}

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    // Exited meanwhile.
    return false;
  }
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
