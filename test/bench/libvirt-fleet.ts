// What the libvirt bench cases share: test-driver hosts (a private libvirtd
// each, its pool free for machine disks), and a fleet of VirtualMachines
// created at once and waited for until each is up.
import { setTimeout as delay } from 'node:timers/promises';
import type { StoragePool } from '../../controller/backends/libvirt/client/handles.js';
import type { LibvirtClient } from '../../controller/backends/libvirt/client/libvirt-client.js';
import type { KubeApi } from '../../controller/runtime/kube-api.js';
import type { ServerSideApply } from '../../controller/runtime/server-side-apply.js';
import { ConditionType } from '../../infra/api/conditions.js';
import { API_VERSION, CORE_GROUP } from '../../infra/api/kind.js';
import { startLibvirtd } from '../peers/libvirt/libvirtd.js';
import type { Obj } from '../support/fixtures.js';
import { anchorClient, libvirtWorld, TEST_POOL, type LibvirtWorld } from '../support/libvirt/world.js';
import { seconds } from './bench-stats.js';
import type { Teardown } from './teardown.js';

const CORE = `${CORE_GROUP}/${API_VERSION}`;
const POLL_MS = 250;
const SAY_EVERY_MS = 10_000;
/**
 * The pool the image volume sits in, apart from the test driver's one pool (100 GiB, every volume
 * counted at full size): that pool is left whole for the machines' 1 GiB OS disks, a hundred per host.
 */
const IMAGE_POOL = 'bench-images';
const IMAGE_VOLUME = 'bench-image.qcow2';

/** One test-driver host: its anchor connection, the pool machine disks go to, and the objects a user writes for it. */
export interface TestDriverHost {
  readonly client: LibvirtClient;
  readonly pool: StoragePool;
  readonly world: LibvirtWorld;
}

/**
 * Starts a private libvirtd (test driver) with the image in a pool of its own, and the Provider
 * `providerName` (with its Secret) in `ns` for it; the VMClass (one 1 GiB OS disk) and the VMImage
 * are the same for every host. Everything started is registered on `teardown`.
 */
export async function startTestDriverHost(teardown: Teardown, ns: string, providerName: string): Promise<TestDriverHost> {
  const daemon = await startLibvirtd();
  teardown.defer(`libvirtd of ${providerName}`, () => daemon.stop());
  const client = await anchorClient(daemon);
  teardown.defer(`libvirt anchor connection of ${providerName}`, () => client.close());
  const pool = await client.pools.lookupByName(TEST_POOL);
  const imagePool = await client.pools.createTransient(`<pool type='dir'><name>${IMAGE_POOL}</name><target><path>/${IMAGE_POOL}</path></target></pool>`);
  await client.volumes.create(
    imagePool,
    `<volume><name>${IMAGE_VOLUME}</name><capacity unit='bytes'>${512 * 1024 ** 2}</capacity><target><format type='qcow2'/></target></volume>`,
  );
  const base = libvirtWorld(ns, daemon, 'bench');
  const secretName = `${providerName}-creds`;
  const provider = base.provider as Obj & { spec: { connection: { credentialsRef: { name: string } } } };
  const world: LibvirtWorld = {
    secret: { ...base.secret, metadata: { name: secretName, namespace: ns } },
    provider: {
      ...provider,
      metadata: { ...provider.metadata, name: providerName },
      spec: {
        ...provider.spec,
        connection: { ...provider.spec.connection, credentialsRef: { name: secretName } },
        // The image's pool is no class's target: machines may still name it.
        allowedTargets: [{ kind: 'pool', names: [IMAGE_POOL] }],
      },
    },
    vmClass: {
      ...base.vmClass,
      spec: {
        hardware: { cpus: 1, memoryMiB: 256, disks: [{ name: 'os', sizeGiB: 1, storageClass: 'fast' }] },
        network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
      },
    },
    vmImage: {
      ...base.vmImage,
      spec: { ...base.vmImage.spec, sources: [{ providerClass: 'libvirt', kind: 'BackingFile', ref: `${IMAGE_POOL}/${IMAGE_VOLUME}` }] },
    },
  };
  return { client, pool, world };
}

/** `count` VirtualMachine names, `<prefix>0000`…, sorted as created. */
export function fleetNames(prefix: string, count: number): string[] {
  const width = Math.max(3, String(count - 1).length);
  return Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(width, '0')}`);
}

export const vmRef = (ns: string, name: string): Obj => ({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { name, namespace: ns } });

export interface FleetSpec {
  readonly api: KubeApi;
  readonly user: ServerSideApply;
  readonly ns: string;
  readonly names: readonly string[];
  readonly vmClass: string;
  readonly vmImage: string;
  readonly label: string;
  readonly timeoutMs: number;
  readonly say: (message: string) => void;
  /** What "up" means. @default Ready=True */
  readonly isUp?: (vm: Obj) => boolean;
  /** What "up" is called in progress lines. @default Ready */
  readonly upLabel?: string;
}

/** When each VM was created and when it was first seen up (performance.now() ms), by name. */
export interface FleetTimes {
  readonly created: ReadonlyMap<string, number>;
  readonly up: ReadonlyMap<string, number>;
}

/** Creates the fleet's VirtualMachines at once, then waits until every one is up; rejects after `timeoutMs`. */
export async function createFleetAndAwaitUp(spec: FleetSpec): Promise<FleetTimes> {
  const { api, user, ns, names, label, say } = spec;
  const created = new Map<string, number>();
  const up = new Map<string, number>();
  const start = performance.now();
  await Promise.all(
    names.map(async (name) => {
      await user.apply({ ...vmRef(ns, name), spec: { classRef: { name: spec.vmClass }, imageRef: { name: spec.vmImage } } });
      created.set(name, performance.now());
    }),
  );
  say(`${label}: created ${names.length} VirtualMachines in ${seconds(performance.now() - start)}`);
  const isUp = spec.isUp ?? isReady;
  const upLabel = spec.upLabel ?? 'Ready';
  let lastSaid = start;
  for (;;) {
    const now = performance.now();
    const vms = await listVirtualMachines(api, ns);
    for (const vm of vms) if (isUp(vm)) up.set(vm.metadata.name, up.get(vm.metadata.name) ?? now);
    if (up.size === names.length) return { created, up };
    if (now - start > spec.timeoutMs) {
      const waiting = vms.find((vm) => !up.has(vm.metadata.name));
      throw new Error(
        `${label}: after ${seconds(spec.timeoutMs)}, ${up.size} of ${names.length} up (${upLabel}); ${waiting?.metadata.name ?? '?'}: ${JSON.stringify(waiting?.status?.conditions ?? [])}`,
      );
    }
    if (now - lastSaid > SAY_EVERY_MS) {
      say(`${label}: ${seconds(now - start)}: ${up.size} of ${names.length} up (${upLabel})`);
      lastSaid = now;
    }
    await delay(POLL_MS);
  }
}

/** Each VM's time from its creation to up, ms, in `names` order. */
export const upTimesMs = (times: FleetTimes, names: readonly string[]): number[] => names.map((n) => (times.up.get(n) ?? NaN) - (times.created.get(n) ?? NaN));

export async function listVirtualMachines(api: KubeApi, ns: string): Promise<Obj[]> {
  return (await api.request<{ items: Obj[] }>('GET', await api.pathOf({ apiVersion: CORE, kind: 'VirtualMachine', metadata: { namespace: ns } }))).items;
}

export function isReady(obj: Obj | undefined): boolean {
  return ((obj?.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === ConditionType.Ready && c.status === 'True');
}
