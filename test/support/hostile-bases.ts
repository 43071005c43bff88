// The hostile corpus' valid bases pointed at the worlds of an every-backend env
// (every-backend-env.ts), so that accepted variants reach a backend instead of
// stopping at a missing reference: each backend's machine and InfraCluster
// name its world's Provider, failure domain, image, storage and network, and
// the VirtualMachine, Provider and VMImage bases exist once per backend (a VM
// is placed on the backend its class and image fit).
import { BACKEND_APIS } from '../../infra/api/backends.js';
import { ENV_BACKENDS, type EnvBackend, type EveryBackendEnv } from './every-backend-env.js';
import { TEST_IMAGE } from './cloud-hypervisor/host.js';
import { validBases, type CorpusObject } from './hostile-corpus.js';
import { IMAGE_VOLUME, TEST_NETWORK, TEST_POOL } from './libvirt/world.js';

type Spec = Record<string, unknown>;

/** A machine spec a user writes for each backend's world: every string in it is handed to the backend. */
function machineSpec(env: EveryBackendEnv, backend: EnvBackend): Spec {
  const run = env.runs[backend];
  const common = { providerRef: { name: run.world.provider.metadata.name }, failureDomain: run.failureDomain, desiredPowerState: 'PoweredOn' };
  switch (backend) {
    case 'vsphere':
      return {
        ...common,
        template: (run.world.vmImage.spec as { sources: { ref: string }[] }).sources[0]?.ref,
        datastore: 'LocalDS_0',
        numCpus: 1,
        memoryMiB: 512,
        firmware: 'efi',
        disks: [{ name: 'os', sizeGiB: 10, provisioning: 'thin' }],
        network: [{ name: 'eth0', portGroup: 'VM Network' }],
      };
    case 'proxmox':
      // Template 9001 is on the simulator's shared storage: it clones to every node.
      return {
        ...common,
        templateVmid: 9001,
        storage: 'ceph',
        sockets: 1,
        cores: 1,
        memoryMiB: 512,
        firmware: 'bios',
        osDiskSizeGiB: 20,
        dataDisks: [{ name: 'data', sizeGiB: 5, storage: 'ceph' }],
        nics: [{ name: 'net0', bridge: 'vmbr0', model: 'virtio' }],
      };
    case 'libvirt':
      // Small disks: the test driver's pool counts every volume at its full capacity.
      return {
        ...common,
        pool: TEST_POOL,
        bootSource: { kind: 'backingVolume', volume: IMAGE_VOLUME },
        vcpus: 1,
        memoryMiB: 512,
        disks: [{ name: 'os', sizeGiB: 2 }],
        network: [{ name: 'eth0', source: { kind: 'network', name: TEST_NETWORK } }],
      };
    case 'cloud-hypervisor':
      return {
        ...common,
        bootSource: { kind: 'image', image: TEST_IMAGE },
        cpus: { boot: 1 },
        memory: { sizeMiB: 128 },
        osDiskSizeGiB: 1,
        storageClass: 'fast',
        nics: [{ name: 'eth0', networkClass: 'lan', ipam: { static: { address: '192.0.2.60', prefix: 24 } } }],
      };
  }
}

/** A VirtualMachine spec placed on `backend` by its world's class and image (a CH host addresses its NICs statically). */
function vmSpec(env: EveryBackendEnv, backend: EnvBackend): Spec {
  const world = env.runs[backend].world;
  return {
    classRef: { name: world.vmClass.metadata.name },
    imageRef: { name: world.vmImage.metadata.name },
    ...(backend === 'cloud-hypervisor' ? { networkOverrides: [{ name: 'eth0', static: { address: '192.0.2.10', prefix: 24 } }] } : {}),
  };
}

const withSpec = (base: CorpusObject | undefined, spec: Spec): CorpusObject | undefined =>
  base && { ...base, spec: structuredClone(spec) as CorpusObject['spec'] };

export interface PointedBases {
  /** One base per kind: the core kinds on vSphere (as the corpus always had them), each backend's machine and InfraCluster on its world. */
  readonly main: ReadonlyMap<string, CorpusObject>;
  /** The VirtualMachine, Provider and VMImage bases of each other backend. */
  readonly perBackend: ReadonlyMap<EnvBackend, ReadonlyMap<string, CorpusObject>>;
}

export function pointedBases(env: EveryBackendEnv): PointedBases {
  const valid = validBases();
  const main = new Map(valid);
  const set = (bases: Map<string, CorpusObject>, kind: string, spec: Spec): void => {
    const pointed = withSpec(valid.get(kind), spec);
    if (pointed) bases.set(kind, pointed);
  };
  const core = (bases: Map<string, CorpusObject>, backend: EnvBackend): Map<string, CorpusObject> => {
    const world = env.runs[backend].world;
    set(bases, 'VirtualMachine', vmSpec(env, backend));
    set(bases, 'Provider', world.provider.spec ?? {});
    set(bases, 'VMImage', world.vmImage.spec ?? {});
    return bases;
  };
  core(main, 'vsphere');
  set(main, 'VMClass', env.runs.vsphere.world.vmClass.spec ?? {});
  for (const backend of ENV_BACKENDS) {
    const api = BACKEND_APIS.find((b) => b.name === backend);
    if (!api) continue;
    set(main, api.machine.kind, machineSpec(env, backend));
    const cluster = valid.get(api.cluster.kind)?.spec as Spec | undefined;
    // providerRefs, when non-empty, win over an example's providerSelector.
    if (cluster) set(main, api.cluster.kind, { ...cluster, providerRefs: [{ name: env.runs[backend].world.provider.metadata.name }] });
  }
  const perBackend = new Map(ENV_BACKENDS.filter((b) => b !== 'vsphere').map((b) => [b, core(new Map(), b)] as const));
  return { main, perBackend };
}
