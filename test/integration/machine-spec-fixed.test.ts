// What a machine's spec may no longer change once its VM was created, judged at admission
// (real kube-apiserver). Once status.placement is recorded, or the machine is provisioned, its
// spec may not name another template, storage, firmware or network, nor shrink a disk: no
// backend applies that to an existing VM, so the edit is refused naming the field instead of
// being accepted and ignored. CPUs, memory and a larger disk, which the backends do converge,
// still pass; before creation, anything does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeApi } from '../../controller/runtime/kube-api.js';
import { apiMessage, createNamespace, objectApi, testKubeConfig } from '../support/kube.js';

const INFRA = 'infrastructure.banlieue.io/v1alpha1';

type Spec = Record<string, unknown>;
interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec: Spec;
  status?: Record<string, unknown>;
}

interface KindCase {
  readonly kind: string;
  readonly plural: string;
  readonly spec: () => Spec;
  /** Edits a backend does not apply to an existing VM: [what, mutate, field named in the refusal]. */
  readonly refused: readonly (readonly [string, (s: Spec) => void, string])[];
  /** Edits a backend converges on an existing VM. */
  readonly accepted: (s: Spec) => void;
}

const list = (s: Spec, field: string): Spec[] => s[field] as Spec[];

const KINDS: readonly KindCase[] = [
  {
    kind: 'VSphereMachine',
    plural: 'vspheremachines',
    spec: () => ({
      template: 'ubuntu',
      datastore: 'ds-1',
      numCpus: 2,
      memoryMiB: 2048,
      disks: [{ name: 'os', sizeGiB: 20 }],
      network: [{ name: 'eth0', portGroup: 'VM Network' }],
    }),
    refused: [
      ['a new template', (s) => (s.template = 'debian'), 'spec.template'],
      ['a new datastore', (s) => (s.datastore = 'ds-2'), 'spec.datastore'],
      ['a datastore removed', (s) => delete s.datastore, 'spec.datastore'],
      ['a new firmware', (s) => (s.firmware = 'efi'), 'spec.firmware'],
      ['a new folder', (s) => (s.folder = 'elsewhere'), 'spec.folder'],
      ['a new port group', (s) => (list(s, 'network')[0]!.portGroup = 'DC0_DVPG0'), 'spec.network'],
      ['a NIC added', (s) => list(s, 'network').push({ name: 'eth1', portGroup: 'VM Network' }), 'spec.network'],
      ['a disk shrunk', (s) => (list(s, 'disks')[0]!.sizeGiB = 10), 'spec.disks[].sizeGiB'],
      ['a disk added', (s) => list(s, 'disks').push({ name: 'data', sizeGiB: 10 }), 'spec.disks'],
      ['a new disk provisioning', (s) => (list(s, 'disks')[0]!.provisioning = 'thick'), 'spec.disks'],
    ],
    accepted: (s) => {
      s.numCpus = 4;
      s.memoryMiB = 4096;
      list(s, 'disks')[0]!.sizeGiB = 40;
    },
  },
  {
    kind: 'ProxmoxMachine',
    plural: 'proxmoxmachines',
    spec: () => ({
      templateVmid: 9000,
      storage: 'local-lvm',
      cores: 2,
      memoryMiB: 2048,
      osDiskSizeGiB: 20,
      dataDisks: [{ name: 'data', sizeGiB: 10 }],
      nics: [{ name: 'net0', bridge: 'vmbr0' }],
    }),
    refused: [
      ['a new template', (s) => (s.templateVmid = 9001), 'spec.templateVmid'],
      ['a new storage', (s) => (s.storage = 'ceph'), 'spec.storage'],
      ['a new firmware', (s) => (s.firmware = 'efi'), 'spec.firmware'],
      ['a new bridge', (s) => (list(s, 'nics')[0]!.bridge = 'vmbr1'), 'spec.nics'],
      ['a new VLAN tag', (s) => (list(s, 'nics')[0]!.vlan = 20), 'spec.nics'],
      ['an OS disk shrunk', (s) => (s.osDiskSizeGiB = 10), 'spec.osDiskSizeGiB'],
      ['a data disk shrunk', (s) => (list(s, 'dataDisks')[0]!.sizeGiB = 5), 'spec.dataDisks[].sizeGiB'],
      ['a data disk added', (s) => list(s, 'dataDisks').push({ name: 'logs', sizeGiB: 10 }), 'spec.dataDisks'],
      ['a data disk on another storage', (s) => (list(s, 'dataDisks')[0]!.storage = 'ceph'), 'spec.dataDisks'],
    ],
    accepted: (s) => {
      s.cores = 4;
      s.memoryMiB = 4096;
      s.osDiskSizeGiB = 40;
      list(s, 'dataDisks')[0]!.sizeGiB = 20;
    },
  },
  {
    kind: 'LibvirtMachine',
    plural: 'libvirtmachines',
    spec: () => ({
      pool: 'default',
      bootSource: { kind: 'backingVolume', volume: 'ubuntu.qcow2' },
      vcpus: 2,
      memoryMiB: 2048,
      disks: [
        { name: 'os', sizeGiB: 20 },
        { name: 'data', sizeGiB: 10 },
      ],
      network: [{ name: 'eth0', source: { kind: 'network', name: 'default' } }],
    }),
    refused: [
      ['a new image', (s) => (s.bootSource = { kind: 'backingVolume', volume: 'debian.qcow2' }), 'spec.bootSource'],
      ['a new pool', (s) => (s.pool = 'fast'), 'spec.pool'],
      ['a new firmware', (s) => (s.firmware = 'efi'), 'spec.firmware'],
      ['a new network', (s) => (list(s, 'network')[0]!.source = { kind: 'bridge', name: 'br0' }), 'spec.network'],
      ['a disk shrunk', (s) => (list(s, 'disks')[0]!.sizeGiB = 10), 'spec.disks[].sizeGiB'],
      ['a disk removed', (s) => list(s, 'disks').splice(1, 1), 'spec.disks'],
    ],
    accepted: (s) => {
      s.vcpus = 4;
      s.memoryMiB = 4096;
      list(s, 'disks')[0]!.sizeGiB = 40;
    },
  },
  {
    kind: 'CloudHypervisorMachine',
    plural: 'cloudhypervisormachines',
    spec: () => ({
      bootSource: { kind: 'image', image: 'ubuntu.raw' },
      cpus: { boot: 2 },
      memory: { sizeMiB: 2048 },
      osDiskSizeGiB: 20,
      storageClass: 'local',
      nics: [{ name: 'eth0', networkClass: 'lan' }],
    }),
    refused: [
      ['a new image', (s) => (s.bootSource = { kind: 'image', image: 'debian.raw' }), 'spec.bootSource'],
      ['a new storage class', (s) => (s.storageClass = 'fast'), 'spec.storageClass'],
      ['a new network class', (s) => (list(s, 'nics')[0]!.networkClass = 'dmz'), 'spec.nics'],
      ['an OS disk shrunk', (s) => (s.osDiskSizeGiB = 10), 'spec.osDiskSizeGiB'],
    ],
    accepted: (s) => {
      s.cpus = { boot: 4 };
      s.memory = { sizeMiB: 4096 };
      s.osDiskSizeGiB = 40;
    },
  },
];

/** What the provider role records before it creates the VM, and once it did. */
const RECORDED = { placement: { provider: 'prov', failureDomain: 'fd-a' } };
const PROVISIONED = { initialization: { provisioned: true } };

describe('a machine spec once its VM was created (admission)', () => {
  let ns: Awaited<ReturnType<typeof createNamespace>>;
  const objects = objectApi();
  const api = new KubeApi(testKubeConfig());
  let serial = 0;

  beforeAll(async () => {
    ns = await createNamespace('spec-fixed');
  });
  afterAll(async () => {
    await ns.remove();
  });

  /** A new machine of `k`, with `status` written through the status subresource as the provider role would. */
  async function created(k: KindCase, status: Record<string, unknown> | undefined): Promise<Obj> {
    const name = `m-${serial++}`;
    await objects.create({ apiVersion: INFRA, kind: k.kind, metadata: { name, namespace: ns.name }, spec: k.spec() } as Obj);
    if (status) {
      await api.request('PATCH', `/apis/${INFRA}/namespaces/${ns.name}/${k.plural}/${name}/status`, {
        body: { status },
        contentType: 'application/merge-patch+json',
      });
    }
    return (await objects.read({ apiVersion: INFRA, kind: k.kind, metadata: { name, namespace: ns.name } })) as unknown as Obj;
  }

  async function replaced(obj: Obj, mutate: (s: Spec) => void): Promise<string | undefined> {
    const changed = structuredClone(obj);
    mutate(changed.spec);
    return objects.replace(changed as never).then(
      () => undefined,
      (err: unknown) => apiMessage(err),
    );
  }

  const refusals = KINDS.flatMap((k) => k.refused.map(([what, mutate, field]) => [k.kind, what, k, mutate, field] as const));

  it.each(refusals)('refuses on a %s with its VM recorded: %s', async (_kind, _what, k, mutate, field) => {
    const refusal = await replaced(await created(k, RECORDED), mutate);
    expect(refusal, 'the API server accepted the edit').toBeDefined();
    expect(refusal).toContain(`${field} cannot`);
    expect(refusal).toContain('once the VM was created');
  });

  it.each(KINDS.map((k) => [k.kind, k] as const))('refuses a new template or image on a provisioned %s recorded by no older version', async (_kind, k) => {
    const [what, mutate, field] = k.refused[0]!;
    const refusal = await replaced(await created(k, PROVISIONED), mutate);
    expect(refusal, `${what} was accepted`).toContain(`${field} cannot`);
  });

  it.each(KINDS.map((k) => [k.kind, k] as const))('accepts CPUs, memory and larger disks on a %s whose VM was created', async (_kind, k) => {
    expect(await replaced(await created(k, RECORDED), k.accepted)).toBeUndefined();
  });

  it.each(KINDS.map((k) => [k.kind, k] as const))('accepts any edit on a %s before its VM is created', async (_kind, k) => {
    const all = (s: Spec): void => k.refused.forEach(([, mutate]) => mutate(s));
    expect(await replaced(await created(k, undefined), all)).toBeUndefined();
  });
});
