// A Cloud Hypervisor host for tests and benchmarks, made of things the test
// owns: a temp directory (state root, image and storage directories, the host
// config), a network namespace of its own with a bridge in it (taps are made
// there and the VMMs run there, never on the host's own interfaces), an image
// (a small raw disk with the halt payload beside it as its kernel) and the VMM
// binary: the simulator's wrapper or the real cloud-hypervisor.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { HOST_CONFIG_ENV, parseHostConfig, type HostConfig } from '../../../controller/backends/cloud-hypervisor/host-config.js';
import { writeHaltPayload } from '../../peers/cloud-hypervisor/halt-payload.js';
import { processesMentioning, readViolations, type SimulatorOptions, type VmmPeer } from '../../peers/cloud-hypervisor/vmm-peers.js';
import type { Violation } from '../../sims/cloud-hypervisor/vmm-server.js';
import type { Obj } from '../fixtures.js';

const run = promisify(execFile);

export const TEST_HOST = 'testhost';
export const TEST_BRIDGE = 'bnlbr0';
export const TEST_IMAGE = 'halt.raw';

export interface TestHost {
  readonly dir: string;
  readonly netns: string;
  readonly config: HostConfig;
  /** The host config file (for BANLIEUE_CH_HOST_CONFIG). */
  readonly configPath: string;
  /** `unix://<host name><state root>`: what the Provider's endpoint says. */
  readonly endpoint: string;
  /** `ip -n <netns> …`. */
  ip(args: readonly string[]): Promise<string>;
  /** Link names in the namespace. */
  links(): Promise<string[]>;
  /** Spec violations the simulator recorded (none for the real VMM). */
  violations(): Violation[];
  /** Kills what is left (a failed test's VMMs), deletes the namespace and the directory. */
  remove(): Promise<void>;
}

export interface TestHostOptions {
  readonly simulator?: SimulatorOptions;
  /** @default 1 */
  readonly powerOffGraceSeconds?: number;
  readonly capacity?: { maxMemoryUsedPercent?: number; minStorageFreeGiB?: number };
  /** The host's name (two hosts in one test need two). @default TEST_HOST */
  readonly hostName?: string;
}

export async function createTestHost(peer: VmmPeer, options: TestHostOptions = {}): Promise<TestHost> {
  // Short: the API socket path must fit a unix socket address.
  const dir = mkdtempSync(join(tmpdir(), 'bnlch-'));
  const netns = `bnlt-${dir
    .slice(-6)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, 'x')}`;
  const ip = async (args: readonly string[]): Promise<string> => (await run('ip', ['-n', netns, ...args])).stdout;
  await run('ip', ['netns', 'add', netns]);
  await ip(['link', 'add', TEST_BRIDGE, 'type', 'bridge']);
  await ip(['link', 'set', TEST_BRIDGE, 'up']);
  await ip(['link', 'set', 'lo', 'up']);
  const images = join(dir, 'images');
  mkdirSync(images);
  mkdirSync(join(dir, 'fast'));
  await run('qemu-img', ['create', '-q', '-f', 'raw', join(images, TEST_IMAGE), '64M']);
  writeHaltPayload(join(images, `${TEST_IMAGE}.kernel`));
  const document = {
    hostName: options.hostName ?? TEST_HOST,
    stateRoot: join(dir, 'state'),
    imageDir: images,
    vmm: { binary: peer.binary(dir, options.simulator), requireKvm: peer.name !== 'simulator' },
    storageClasses: { fast: join(dir, 'fast') },
    networkClasses: { lan: TEST_BRIDGE },
    netns,
    capacity: { maxMemoryUsedPercent: options.capacity?.maxMemoryUsedPercent ?? 100, minStorageFreeGiB: options.capacity?.minStorageFreeGiB ?? 0 },
    powerOffGraceSeconds: options.powerOffGraceSeconds ?? 1,
  };
  const configPath = join(dir, 'cloud-hypervisor.yaml');
  writeFileSync(configPath, stringify(document));
  const config = parseHostConfig(stringify(document), configPath);
  return {
    dir,
    netns,
    config,
    configPath,
    endpoint: `unix://${config.hostName}${config.stateRoot}`,
    ip,
    links: async () => (JSON.parse(await ip(['-json', 'link', 'show'])) as { ifname: string }[]).map((l) => l.ifname),
    violations: () => readViolations(dir),
    remove: async () => {
      for (const pid of processesMentioning(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }
      await run('ip', ['netns', 'delete', netns]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Machine directories under the state root (one per machine with a VMM or record). */
export function machineDirs(host: TestHost): string[] {
  try {
    return readdirSync(host.config.stateRoot).filter((name) => /^[0-9a-f-]{36}$/.test(name));
  } catch {
    return [];
  }
}

/** The Provider a user writes for this host. */
export function chProvider(ns: string, host: TestHost, name = 'host-a'): Obj {
  return {
    apiVersion: 'banlieue.io/v1alpha1',
    kind: 'Provider',
    metadata: { name, namespace: ns },
    spec: {
      providerClassRef: { name: 'cloud-hypervisor' },
      connection: { endpoint: host.endpoint },
      capabilities: {
        storageClasses: [{ name: 'fast' }],
        networkClasses: [{ name: 'lan', target: { bridge: TEST_BRIDGE } }],
      },
    },
  };
}

/** The environment a provider role needs to run as on this host: BANLIEUE_CH_HOST_CONFIG naming its config (startRole's `env`). */
export function hostConfigEnv(host: TestHost): Record<string, string> {
  return { [HOST_CONFIG_ENV]: host.configPath };
}

/** The Provider, VMClass (1 CPU, 128 MiB, a 1 GiB disk, eth0 static) and VMImage a user writes for this host. */
export function chWorld(ns: string, host: TestHost, suffix: string): { provider: Obj; vmClass: Obj; vmImage: Obj } {
  return {
    provider: chProvider(ns, host),
    vmClass: {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMClass',
      metadata: { name: `ch-tiny-${suffix}` },
      spec: {
        hardware: { cpus: 1, memoryMiB: 128, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'fast' }] },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan', ipam: { mode: 'static' } }] },
      },
    },
    vmImage: {
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'VMImage',
      metadata: { name: `ch-halt-${suffix}` },
      spec: {
        osFamily: 'linux',
        osDistribution: 'halt-payload',
        osVersion: '1',
        architecture: 'amd64',
        sources: [{ providerClass: 'cloud-hypervisor', kind: 'BackingFile', ref: TEST_IMAGE }],
      },
    },
  };
}
