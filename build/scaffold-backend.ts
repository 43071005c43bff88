// `make scaffold-backend NAME=<name>`: the start of a new backend, as
// docs/adr/0014-backend-descriptors.md describes one. It writes the backend's
// own files (its API kind file, its folder under controller/backends/ with
// descriptor and machine builder, its test stubs and guide) and adds its
// registration lines to the lists that name every backend, formatted as make
// format would; make then
// regenerates dist/ and the docs tables. The result compiles, lints and passes
// the unit suite: the backend's kinds are served and its machines are built,
// and its provider role answers "not built yet" until one is written.
//
//   npx tsx build/scaffold-backend.ts <name> [--root <dir>]
//
// Run from a clean tree: it refuses a name the tree has already.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as prettier from 'prettier';

/** The spellings of one backend name. */
export interface BackendNames {
  /** As Providers name it: `hyper-v`. */
  readonly name: string;
  /** Identifiers: `hyperV`. */
  readonly camel: string;
  /** Types and kinds: `HyperV`. */
  readonly pascal: string;
  /** Constants and clusterctl variables: `HYPER_V`. */
  readonly constant: string;
  /** providerID scheme and short-name stem: `hyperv`. */
  readonly compact: string;
}

const NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export function backendNames(name: string): BackendNames {
  if (!NAME.test(name)) throw new Error(`backend name "${name}": lower-case letters and digits, words joined by '-' (e.g. hyperv, hyper-v)`);
  const words = name.split('-');
  const cap = (w: string): string => `${w.charAt(0).toUpperCase()}${w.slice(1)}`;
  return {
    name,
    camel: `${words[0] ?? ''}${words.slice(1).map(cap).join('')}`,
    pascal: words.map(cap).join(''),
    constant: name.toUpperCase().replaceAll('-', '_'),
    compact: words.join(''),
  };
}

/** `text` with each `__key__` replaced by its spelling (the generated code's own `${…}` stays as written). */
function fill(text: string, n: BackendNames): string {
  return text
    .replaceAll('__name__', n.name)
    .replaceAll('__camel__', n.camel)
    .replaceAll('__Pascal__', n.pascal)
    .replaceAll('__CONST__', n.constant)
    .replaceAll('__compact__', n.compact);
}

/** The backend's own files, by path. */
function ownFiles(n: BackendNames): Record<string, string> {
  return {
    [`infra/api/infrastructure.banlieue.io/v1alpha1/${n.name}-machine.ts`]: API_FILE,
    [`controller/backends/${n.name}/descriptor.ts`]: DESCRIPTOR_FILE,
    [`controller/backends/${n.name}/build-machine.ts`]: BUILDER_FILE,
    [`test/unit/backends/${n.name}/build-machine.test.ts`]: BUILDER_TEST_FILE,
    [`test/peers/${n.name}/backend.test.ts`]: PEER_TEST_FILE,
    [`docs/${n.name}.md`]: GUIDE_FILE,
    [`examples/providers/${n.name}.yaml`]: PROVIDER_EXAMPLE,
    [`examples/infrastructure/${n.name}-machine.yaml`]: MACHINE_EXAMPLE,
    [`examples/cluster-api/${n.name}-cluster.yaml`]: CLUSTER_EXAMPLE,
  };
}

/**
 * One registration: `text` inserted into `file` right after the last line
 * matching `after`, before the first line matching `before`, or as the last
 * element of the array literal that `list` opens (on one line or several, as
 * the formatter left it).
 */
interface Insertion {
  readonly file: string;
  readonly text: string;
  readonly after?: RegExp;
  readonly before?: RegExp;
  readonly list?: RegExp;
}

/** The lines that register the backend in the lists naming every backend. */
function registrations(n: BackendNames): Insertion[] {
  const apiModule = `./infrastructure.banlieue.io/v1alpha1/${n.name}-machine.js`;
  return [
    {
      file: 'infra/api/backends.ts',
      after: /^import \{ \w+Api \} from '\.\/infrastructure\.banlieue\.io\/v1alpha1\/[a-z0-9-]+-machine\.js';$/,
      text: `import { ${n.camel}Api } from '${apiModule}';`,
    },
    {
      file: 'infra/api/backends.ts',
      after: /^export \* from '\.\/infrastructure\.banlieue\.io\/v1alpha1\/[a-z0-9-]+-machine\.js';$/,
      text: `export * from '${apiModule}';`,
    },
    { file: 'infra/api/backends.ts', list: /export const BACKEND_APIS = \[/, text: `${n.camel}Api` },
    {
      file: 'controller/backends/registry.ts',
      after: /^import \{ \w+Descriptor \} from '\.\/[a-z0-9-]+\/descriptor\.js';$/,
      text: `import { ${n.camel}Descriptor } from './${n.name}/descriptor.js';`,
    },
    { file: 'controller/backends/registry.ts', list: /const descriptors: readonly BackendDescriptor\[\] = \[/, text: `${n.camel}Descriptor` },
    {
      file: 'infra/authoring/kinds.ts',
      after: /^(import .*|\}) from '\.\.\/api\/infrastructure\.banlieue\.io\/v1alpha1\/[a-z0-9-]+-machine\.js';$/,
      text: `import { ${n.pascal}ClusterKind, ${n.pascal}ClusterTemplateKind, ${n.pascal}MachineKind, ${n.pascal}MachineTemplateKind } from '../api/infrastructure.banlieue.io/v1alpha1/${n.name}-machine.js';`,
    },
    {
      file: 'infra/authoring/kinds.ts',
      after: /^export const \w+ = defineConstruct\(\w+Kind\);$/,
      text: ['Machine', 'MachineTemplate', 'Cluster', 'ClusterTemplate']
        .map((k) => `export const ${n.pascal}${k} = defineConstruct(${n.pascal}${k}Kind);`)
        .join('\n'),
    },
    // The samples' table (the first `};`), keyed by backend name: the compiler asks for an entry.
    { file: 'test/support/backend-samples.ts', before: /^\};$/, text: fill(SAMPLE_ENTRY, n) },
  ];
}

function insert(text: string, at: Insertion): string {
  if (at.list) return appendToList(text, at.list, at);
  const lines = text.split('\n');
  const index = at.after ? lines.findLastIndex((l) => at.after?.test(l)) + 1 : lines.findIndex((l) => at.before?.test(l));
  if (index <= 0) throw new Error(`${at.file}: no place for the registration (${(at.after ?? at.before)?.source ?? ''})`);
  return [...lines.slice(0, index), at.text, ...lines.slice(index)].join('\n');
}

/** `text` with `at.text` as the last element of the array literal that `opening` ends with. */
function appendToList(text: string, opening: RegExp, at: Insertion): string {
  const open = opening.exec(text);
  const close = open ? text.indexOf(']', open.index + open[0].length) : -1;
  if (!open || close < 0) throw new Error(`${at.file}: no list for the registration (${opening.source})`);
  const head = text.slice(0, close).trimEnd().replace(/,$/, '');
  return `${head}, ${at.text}${text.slice(close)}`;
}

/** `text` formatted as make format would (.prettierrc.json, .prettierignore); the file name picks the parser. */
async function formatted(root: string, file: string, text: string): Promise<string> {
  const { ignored } = await prettier.getFileInfo(join(root, file), { ignorePath: join(root, '.prettierignore') });
  if (ignored) return text;
  const options = (await prettier.resolveConfig(join(root, file))) ?? {};
  return prettier.format(text, { ...options, filepath: join(root, file) });
}

/** Writes the backend `name` into the tree at `root`; returns the files it wrote and those it changed. */
export async function scaffoldBackend(name: string, root = '.'): Promise<{ readonly written: string[]; readonly changed: string[] }> {
  const n = backendNames(name);
  const own = ownFiles(n);
  const taken = [...Object.keys(own), `controller/backends/${n.name}`].filter((f) => existsSync(join(root, f)));
  if (taken.length > 0) throw new Error(`backend ${n.name} is in the tree already: ${taken.join(', ')}`);
  // Every registration is computed before anything is written: a missing anchor leaves the tree as it was.
  const edits = new Map<string, string>();
  for (const at of registrations(n)) edits.set(at.file, insert(edits.get(at.file) ?? readFileSync(join(root, at.file), 'utf8'), at));
  for (const [file, text] of Object.entries(own)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), await formatted(root, file, fill(text, n)));
  }
  for (const [file, text] of edits) writeFileSync(join(root, file), await formatted(root, file, text));
  return { written: Object.keys(own), changed: [...edits.keys()] };
}

// The generated files. `__name__` and its other spellings are replaced; the rest is written as it is.

const API_FILE = `// The __Pascal__ backend's API: its machine, machine-template, cluster and
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
  shortName: '__compact__m',
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

export const { cluster: __Pascal__ClusterKind, template: __Pascal__ClusterTemplateKind } = defineClusterKinds('__Pascal__', '__compact__c', '__Pascal__');

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

const DESCRIPTOR_FILE = `// The __Pascal__ backend, as the rest of banlieue sees it
// (docs/adr/0014-backend-descriptors.md). The controller builds its machines;
// its provider role is not built yet: \`banlieue provider __name__\` says so.
import { __camel__Api, type __Pascal__MachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/__name__-machine.js';
import type { BackendDescriptor } from '../descriptor.js';
import { build__Pascal__Machine, __camel__CarriedTargets } from './build-machine.js';

export const __camel__Descriptor: BackendDescriptor<__Pascal__MachineSpec> = {
  api: __camel__Api,
  buildMachine: build__Pascal__Machine,
  carriedTargets: __camel__CarriedTargets,
  machineCapacity: (spec) => ({ cpus: spec.cpus, memoryMiB: spec.memoryMiB, architecture: 'amd64' }),
  // The provider role: createBackend, a Backend<__Pascal__MachineSpec> (controller/backends/backend.ts)
  // on a client/ of this folder; then providerRoleBuilt: true in the API entry.
};
`;

const BUILDER_FILE = `// VirtualMachine → __Pascal__Machine: the image, the class hardware, each disk
// on the storage target and each interface on the network target the
// controller resolved for this failure domain.
import { __Pascal__MachineKind, type __Pascal__Machine, type __Pascal__MachineSpec } from '../../../infra/api/infrastructure.banlieue.io/v1alpha1/__name__-machine.js';
import type { BuildResult, CarriedTargets, MachineBuildContext } from '../machine-build.js';

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
`;

const BUILDER_TEST_FILE = `import { describe, expect, it } from 'vitest';
import { build__Pascal__Machine, __camel__CarriedTargets } from '../../../controller/backends/__name__/build-machine.js';
import type { MachineBuildContext } from '../../../controller/backends/machine-build.js';
import type { VirtualMachine } from '../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import type { VMClass } from '../../../infra/api/banlieue.io/v1alpha1/vm-class.js';
import type { VMImage } from '../../../infra/api/banlieue.io/v1alpha1/vm-image.js';

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

const PEER_TEST_FILE = `// The __Pascal__ provider role against its test peer: the real __Pascal__ where it
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

const GUIDE_FILE = `# __Pascal__

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

const PROVIDER_EXAMPLE = `# A __Pascal__ Provider and its credentials Secret.
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

const MACHINE_EXAMPLE = `# A __Pascal__Machine written by hand, on the __name__ Provider.
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

const CLUSTER_EXAMPLE = `# A __Pascal__Cluster over the __name__ Provider and the machine template
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

const SAMPLE_ENTRY = `  '__name__': {
    endpoint: 'https://__name__.example.com',
    credentials: true,
    source: { kind: 'Template', ref: 'ubuntu-24.04' },
    storage: { key: 'storage', id: 'ssd' },
    network: { key: 'network', id: 'lan' },
    site: '__name__1',
    raw: () => ({}),
    optionalRaw: {},
  },`;

async function main(argv: readonly string[]): Promise<void> {
  const [name, flag, dir] = argv;
  if (name === undefined || (flag !== undefined && (flag !== '--root' || dir === undefined)))
    throw new Error('usage: scaffold-backend.ts <name> [--root <dir>]');
  const { written, changed } = await scaffoldBackend(name, dir ?? '.');
  console.log(`wrote ${written.join(', ')}`);
  console.log(`registered in ${changed.join(', ')}`);
}

if (process.argv[1]?.endsWith('scaffold-backend.ts')) await main(process.argv.slice(2));
