// The files `make scaffold-backend` writes for a new backend (build/scaffold-backend.ts),
// and its entry in the test samples' table. `__name__` and its other spellings
// (__camel__, __Pascal__, __CONST__, __compact__) are replaced; the rest is written
// as it is, then formatted as make format would.

export const API_FILE = `// The __Pascal__ backend's API: its machine, machine-template, cluster and
// cluster-template kinds, and its entry in the backend list (what the API
// knows of it: endpoint schemes, credentials, image sources, clusterctl flavor).
// Written by make scaffold-backend: every value below is a starting point to
// replace with what __Pascal__ really takes.
import { Ipam, MacAddress } from '../../addressing.js';
import { InterfaceName } from '../../names.js';
import type { ObjectOf } from '../../kind.js';
import { ListMap, Name, SizeGiB, Type, type Static } from '../../schema.js';
import { fixedField, fixedListEntries, growOnlyListSizes } from './fixed-once-created.js';
import { defineClusterKinds } from './infra-cluster.js';
import { defineMachineKinds, machineSpecFields, machineSpecValidations, machineStatusFields } from './infra-machine.js';
import { defineBackendApi } from '../../backend-api.js';
import { stringVariable } from '../../../clusterctl/template-variables.js';

export const __Pascal__MachineSpec = Type.Object(
  {
    ...machineSpecFields('__compact__://<UUID>'),
    image: Type.String({ description: 'Image the OS disk starts from.', minLength: 1, maxLength: 1024 }),
    cpus: Type.Integer({ description: 'Virtual CPUs.', minimum: 1, maximum: 256 }),
    memoryMiB: Type.Integer({ description: 'Memory in MiB.', minimum: 128, maximum: 4194304 }),
    disks: ListMap(
      Type.Object(
        {
          name: Name('Disk name.', { maxLength: 63 }),
          sizeGiB: SizeGiB('Size in GiB; the first disk is the OS disk.'),
          storage: Type.String({ description: 'Storage target of the disk.', minLength: 1, maxLength: 256 }),
        },
        { description: 'A disk.' },
      ),
      ['name'],
      { description: 'Disks; the first is the OS disk.', minItems: 1, maxItems: 16 },
    ),
    network: Type.Optional(
      ListMap(
        Type.Object(
          {
            name: InterfaceName('Interface name in the guest (a Linux interface name).'),
            network: Type.String({ description: 'Network target of the interface.', minLength: 1, maxLength: 256 }),
            macAddress: Type.Optional(MacAddress()),
            ipam: Type.Optional(Ipam),
          },
          { description: 'A network interface.' },
        ),
        ['name'],
        { description: 'Network interfaces, in order.', maxItems: 10 },
      ),
    ),
  },
  { description: 'Desired state of the __Pascal__ VM.', ...machineSpecValidations() },
);

export const __Pascal__MachineStatus = Type.Object(
  { ...machineStatusFields, vmRef: Type.Optional(Type.String({ description: 'The backend reference of the VM.' })) },
  { description: 'Observed state of the __Pascal__ VM.' },
);

export const { machine: __Pascal__MachineKind, template: __Pascal__MachineTemplateKind } = defineMachineKinds({
  kind: '__Pascal__Machine',
  nicsField: 'network',
  shortName: 'b__compact__m',
  backend: '__Pascal__',
  spec: __Pascal__MachineSpec,
  status: __Pascal__MachineStatus,
  fixedOnceCreated: [
    fixedField('image', 'image a VM boots'),
    fixedListEntries('disks', ['storage'], 'disks and their storage'),
    growOnlyListSizes('disks', 'sizeGiB'),
    fixedListEntries('network', ['network'], 'network interfaces and their networks'),
  ],
});

export type __Pascal__MachineSpec = Static<typeof __Pascal__MachineSpec>;
export type __Pascal__MachineStatus = Static<typeof __Pascal__MachineStatus>;
export type __Pascal__Machine = ObjectOf<typeof __Pascal__MachineKind>;
export type __Pascal__MachineTemplate = ObjectOf<typeof __Pascal__MachineTemplateKind>;

export const { cluster: __Pascal__ClusterKind, template: __Pascal__ClusterTemplateKind } = defineClusterKinds('__Pascal__', 'b__compact__c', '__Pascal__');

const __CONST___IMAGE = stringVariable({ name: '__CONST___IMAGE', description: 'Image the machines boot.', sample: 'ubuntu-2404-kube-v1.34.1' });
const __CONST___STORAGE = stringVariable({ name: '__CONST___STORAGE', description: 'Storage target of the machines\\' disks.', sample: 'default' });
const __CONST___NETWORK = stringVariable({ name: '__CONST___NETWORK', description: 'Network target of the machines\\' one NIC (DHCP).', sample: 'default' });

export const __camel__Api = defineBackendApi({
  name: '__name__',
  title: '__Pascal__',
  instance: 'a __Pascal__ host',
  providerIDScheme: '__compact__',
  machine: __Pascal__MachineKind,
  machineTemplate: __Pascal__MachineTemplateKind,
  cluster: __Pascal__ClusterKind,
  clusterTemplate: __Pascal__ClusterTemplateKind,
  providerRuns: 'cluster',
  // true once controller/backends/__name__/descriptor.ts has createBackend: the install then runs its Deployment.
  providerRoleBuilt: false,
  egressPorts: [443],
  endpoint: { schemes: [{ scheme: 'https', defaultPort: 443 }], example: 'https://__name__.example.com', insecureSkipTLSVerify: false },
  credentials: { secret: 'required', keys: ['username', 'password'] },
  classTargetKeys: ['storage', 'network'],
  targetKinds: ['storage', 'network'],
  imageSources: { Template: { ref: 'image name' } },
  // Shipped in a release once the provider role is built; rendered and checked against the schema before that.
  clusterctl: {
    flavor: '__name__',
    machineSpec: (shape, v): __Pascal__MachineSpec => ({
      image: v.str(__CONST___IMAGE),
      cpus: shape.cpus,
      memoryMiB: shape.memoryMiB,
      disks: [{ name: 'os', sizeGiB: shape.osDiskGiB, storage: v.str(__CONST___STORAGE) }],
      network: [{ name: 'eth0', network: v.str(__CONST___NETWORK) }],
    }),
  },
});
`;

export const DESCRIPTOR_FILE = `// The __Pascal__ backend, as the rest of banlieue sees it
// (docs/adr/0014-backend-descriptors.md). The controller builds its machines;
// its provider role is not built yet: \`banlieue provider __name__\` says so.
import { __camel__Api, type __Pascal__MachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/__name__-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { build__Pascal__Machine, __camel__CarriedTargets, __camel__NamedTargets } from './build-machine.js';

export const __camel__Descriptor: BackendDescriptor<__Pascal__MachineSpec> = {
  api: __camel__Api,
  buildMachine: build__Pascal__Machine,
  carriedTargets: __camel__CarriedTargets,
  namedTargets: __camel__NamedTargets,
  machineCapacity: (spec) => ({ cpus: spec.cpus, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
  // The provider role: createBackend, a Backend<__Pascal__MachineSpec> (controller/backends/backend.ts)
  // on a client/ of this folder; then providerRoleBuilt: true in the API entry.
};
`;

export const BUILDER_FILE = `// VirtualMachine → __Pascal__Machine: the image, the class hardware, each disk
// on the storage target and each interface on the network target the
// controller resolved for this failure domain.
import { __Pascal__MachineKind, type __Pascal__Machine, type __Pascal__MachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/__name__-machine.js';
import type { BuildResult, CarriedTargets, MachineBuildContext } from '../machine-build.js';
import { namedTarget, type NamedTarget } from '../named-targets.js';

export function build__Pascal__Machine(context: MachineBuildContext): BuildResult<__Pascal__Machine> {
  return {
    ok: true,
    object: {
      apiVersion: context.apiVersion,
      kind: __Pascal__MachineKind.kind,
      metadata: context.metadata,
      spec: {
        ...context.commonSpec,
        image: context.imageRef,
        cpus: context.hardware.cpus,
        memoryMiB: context.hardware.memoryMiB,
        disks: context.disks.map(({ disk, backendId }) => ({ name: disk.name, sizeGiB: disk.sizeGiB, storage: backendId })),
        network: context.nics.map(({ nic, backendId, ipam }) => ({ name: nic.name, network: backendId, ...(ipam ? { ipam } : {}) })),
      },
    },
  };
}

/** The image, each disk's storage and each interface's network, as the builder wrote them. */
export function __camel__CarriedTargets(spec: __Pascal__MachineSpec): CarriedTargets {
  return {
    imageRef: spec.image,
    storage: spec.disks.map((d) => d.storage),
    networks: (spec.network ?? []).map((n) => n.network),
  };
}

/** The storage and networks the spec names: held to what the machine's Provider publishes (targetKinds). */
export function __camel__NamedTargets(spec: __Pascal__MachineSpec): NamedTarget[] {
  return [
    ...spec.disks.flatMap((d, i) => namedTarget(\`spec.disks[\${i}].storage\`, ['storage'], d.storage)),
    ...(spec.network ?? []).flatMap((n, i) => namedTarget(\`spec.network[\${i}].network\`, ['network'], n.network)),
  ];
}
`;

export const BUILDER_TEST_FILE = `import { describe, expect, it } from 'vitest';
import { build__Pascal__Machine, __camel__CarriedTargets } from '../../../../controller/backends/__name__/build-machine.js';
import type { MachineBuildContext } from '../../../../controller/backends/machine-build.js';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../../infra/api/banlieue.io/v1alpha1/vm-image.js';

const vmClass: VMClass = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VMClass',
  metadata: { name: 'small' },
  spec: { hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] }, network: { interfaces: [{ name: 'eth0', networkClass: 'prod' }] } },
};
const vm: VirtualMachine = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name: 'web-1', namespace: 'team-a' },
  spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' } },
};
const image: VMImage = {
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VMImage',
  metadata: { name: 'ubuntu' },
  spec: { osFamily: 'linux', osDistribution: 'ubuntu', osVersion: '24.04', architecture: 'amd64', sources: [{ providerClass: '__name__', kind: 'Template', ref: 'ubuntu-24.04' }] },
};

/** A VirtualMachine placed on a __Pascal__ Provider, as the controller hands it to the builder. */
const context: MachineBuildContext = {
  input: { vm, vmClass, image },
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  metadata: { name: 'web-1', namespace: 'team-a' },
  commonSpec: { providerRef: { name: '__name__-a' }, failureDomain: 'fd-1' },
  hardware: { cpus: 2, memoryMiB: 4096, disks: vmClass.spec.hardware.disks },
  disks: vmClass.spec.hardware.disks.map((disk) => ({ disk, backendId: 'ssd' })),
  nics: [{ nic: { name: 'eth0', networkClass: 'prod' }, backendId: 'lan', ipam: undefined }],
  imageRef: 'ubuntu-24.04',
  failureDomainName: 'fd-1',
  raw: {},
};

describe('__Pascal__Machine build', () => {
  it('writes the image, the hardware, each disk on its storage and each interface on its network', () => {
    const built = build__Pascal__Machine(context);
    if (!built.ok) throw new Error(built.message);
    expect(built.object.spec).toMatchObject({
      image: 'ubuntu-24.04',
      cpus: 2,
      memoryMiB: 4096,
      disks: [{ name: 'os', sizeGiB: 20, storage: 'ssd' }],
      network: [{ name: 'eth0', network: 'lan' }],
    });
  });

  it('reads back the image and targets it wrote', () => {
    const built = build__Pascal__Machine(context);
    if (!built.ok) throw new Error(built.message);
    expect(__camel__CarriedTargets(built.object.spec)).toEqual({ imageRef: 'ubuntu-24.04', storage: ['ssd'], networks: ['lan'] });
  });

  it.todo('refuses a placement whose failure domain lacks the raw facts the backend needs, naming them');
});
`;

export const PEER_TEST_FILE = `// The __Pascal__ provider role against its test peer: the real __Pascal__ where it
// can run here, else a simulator in test/sims/__name__/ that validates every
// request against the API's own spec.
import { describe, it } from 'vitest';

describe('__Pascal__ provider role', () => {
  it.todo('publishes one failure domain per placement unit, with the classes it offers there');
  it.todo('creates a VM with the machine UUID and its ownership mark, and finds it again after a crash or a move');
  it.todo('leaves alone a VM of that UUID without the machine mark (VMNotOwned)');
  it.todo('powers, resizes and reports the addresses of a VM; deletes it with its disks');
});
`;

export const GUIDE_FILE = `# __Pascal__

A \`Provider\` of class \`__name__\` is one __Pascal__ host; its machines are
\`__Pascal__Machine\` objects. The provider role is not built yet:
\`banlieue provider __name__\` says so, and the install gives it an identity
and RBAC but no Deployment.

## Provider

\`\`\`yaml
apiVersion: banlieue.io/v1alpha1
kind: Provider
metadata: {name: __name__-a, namespace: vms}
spec:
  providerClassRef: {name: __name__}
  connection:
    endpoint: https://__name__.example.com
    credentialsRef: {name: __name__-credentials}   # keys: username, password
\`\`\`

## Machines

A \`__Pascal__Machine\` carries its image, CPUs, memory, each disk's storage
target and each interface's network target, as the controller resolved them
from the VirtualMachine's class.
`;

export const PROVIDER_EXAMPLE = `# A __Pascal__ Provider and its credentials Secret.
#
# Apply after the namespace exists:  kubectl apply -f examples/providers/__name__.yaml
---
apiVersion: v1
kind: Secret
metadata:
  name: __name__-credentials
  namespace: vms
type: Opaque
stringData:
  username: banlieue
  password: changeme
---
apiVersion: banlieue.io/v1alpha1
kind: Provider
metadata:
  name: __name__
  namespace: vms
spec:
  providerClassRef:
    name: __name__
  connection:
    endpoint: https://__name__.example.com
    credentialsRef:
      name: __name__-credentials
  capabilities:
    storageClasses:
      - name: standard
        target:
          storage: default
    networkClasses:
      - name: lan
        target:
          network: default
`;

export const MACHINE_EXAMPLE = `# A __Pascal__Machine written by hand, on the __name__ Provider.
#
# kubectl apply -f examples/infrastructure/__name__-machine.yaml
---
apiVersion: infrastructure.banlieue.io/v1alpha1
kind: __Pascal__Machine
metadata:
  name: build-01
  namespace: vms
spec:
  providerRef:
    name: __name__
  image: ubuntu-24.04
  cpus: 2
  memoryMiB: 4096
  disks:
    - name: os # the first disk is the OS disk
      sizeGiB: 40
      storage: default
  network:
    - name: eth0
      network: default
`;

export const CLUSTER_EXAMPLE = `# A __Pascal__Cluster over the __name__ Provider and the machine template
# Cluster API clones for its Machines.
#
# kubectl apply -f examples/cluster-api/__name__-cluster.yaml
---
apiVersion: infrastructure.banlieue.io/v1alpha1
kind: __Pascal__Cluster
metadata:
  name: k8s-lab
  namespace: vms
spec:
  controlPlaneEndpoint:
    host: 198.51.100.200
    port: 6443
  providerRefs:
    - name: __name__
---
apiVersion: infrastructure.banlieue.io/v1alpha1
kind: __Pascal__MachineTemplate
metadata:
  name: k8s-lab-node
  namespace: vms
spec:
  template:
    spec:
      image: ubuntu-2404-kube-v1.34.1
      cpus: 2
      memoryMiB: 4096
      disks:
        - name: os
          sizeGiB: 30
          storage: default
      network:
        - name: eth0
          network: default
`;

export const SAMPLE_ENTRY = `  '__name__': {
    endpoint: 'https://__name__.example.com',
    credentials: true,
    source: { kind: 'Template', ref: 'ubuntu-24.04' },
    storage: { key: 'storage', id: 'ssd' },
    network: { key: 'network', id: 'lan' },
    site: '__name__1',
    raw: () => ({}),
    optionalRaw: {},
  },`;
