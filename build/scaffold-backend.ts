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
import {
  API_FILE,
  BUILDER_FILE,
  BUILDER_TEST_FILE,
  CLUSTER_EXAMPLE,
  DESCRIPTOR_FILE,
  GUIDE_FILE,
  MACHINE_EXAMPLE,
  PEER_TEST_FILE,
  PROVIDER_EXAMPLE,
  SAMPLE_ENTRY,
} from './scaffold-backend-templates.js';

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
      after: /^export type \w+Props = PropsOf<typeof \w+Kind>;$/,
      text: ['Machine', 'MachineTemplate', 'Cluster', 'ClusterTemplate']
        .map(
          (k) =>
            `export class ${n.pascal}${k} extends defineConstruct(${n.pascal}${k}Kind) {}\nexport type ${n.pascal}${k}Props = PropsOf<typeof ${n.pascal}${k}Kind>;`,
        )
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

async function main(argv: readonly string[]): Promise<void> {
  const [name, flag, dir] = argv;
  if (name === undefined || (flag !== undefined && (flag !== '--root' || dir === undefined)))
    throw new Error('usage: scaffold-backend.ts <name> [--root <dir>]');
  const { written, changed } = await scaffoldBackend(name, dir ?? '.');
  console.log(`wrote ${written.join(', ')}`);
  console.log(`registered in ${changed.join(', ')}`);
}

if (process.argv[1]?.endsWith('scaffold-backend.ts')) await main(process.argv.slice(2));
