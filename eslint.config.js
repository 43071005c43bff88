// @ts-check
// Lint for banlieue: the layering of STYLE §2 "Layout shows the architecture", plus the
// few type-aware rules that catch the smells of STYLE §3 (floating promises, `any`).
//
// Layering, arrows = "may import":
//   controller/cli → controller/reconcilers → controller/backends → controller/runtime, controller/scheduler → infra
// test/** and controller/cli/** may import anything.
//
// Why core `no-restricted-imports` and not eslint-plugin-boundaries or import-x: every import
// in this repo is a relative specifier (no path aliases) and every layer is a folder whose
// name occurs once in the tree, so a layer is recognisable in the specifier itself
// (`../../backends/vsphere/x.js` names `backends/vsphere/`). That needs no resolver (which
// for NodeNext `.js` → `.ts` would be one more plugin) and no extra dependency. Where the
// specifier alone is not enough ("no other backend folder": `../libvirt/x.js` from
// backends/vsphere/ but `../client/x.js` from backends/vsphere/machine/), the zone is split by
// folder depth, generated below.
//
// Flat config does not merge a rule's options across config objects: the last object matching
// a file wins. So each layer zone below matches a disjoint set of files (`files` + `ignores`)
// and lists every restriction for it.
//
// Two rules, so that neither can loosen the other:
//   - `no-restricted-imports` (core): the layering. It does not know `import type`, so a
//     forbidden layer is forbidden for types too.
//   - `@typescript-eslint/no-restricted-imports`: "imports only types" (scheduler/, mapping.ts).
//     Its `allowTypeImports` lets a type-only import through every pattern that sets it,
//     which is why the layering does not live in this rule.
import { fileURLToPath } from 'node:url';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

const LAYERS = 'STYLE §2: cli → reconcilers → backends → runtime, scheduler → infra';

/** A specifier that names folder `dir` (any depth of `../` before it). @param {string} dir */
const names = (dir) => `(^|/)${dir}/`;
/** `(\.\./){n}`: a specifier climbing exactly `n` folders (followed by what comes next). @param {number} n */
const up = (n) => `^(\\.\\./){${n}}`;

const forbid = {
  controller: { regex: names('controller'), message: `infra/ imports nothing from controller/ (${LAYERS}).` },
  cli: { regex: names('cli'), message: `Nothing but controller/cli/ itself imports controller/cli/ (${LAYERS}).` },
  reconcilers: { regex: names('reconcilers'), message: `Of controller/ and infra/, only controller/cli/ imports controller/reconcilers/ (${LAYERS}).` },
  backends: { regex: names('backends'), message: `controller/runtime/ and controller/scheduler/ import nothing from controller/backends/ (${LAYERS}).` },
  backendByName: {
    regex: `${names('backends')}[^/]+/`,
    message:
      'Reconcilers use a backend through the shared files of controller/backends/ (backend.ts, descriptor.ts, backend-error.ts), never a backend folder by name (STYLE §2: "adding a backend touches no reconciler").',
  },
  registry: {
    regex: `${names('backends')}registry\\.js$`,
    message: 'Only controller/cli/ imports controller/backends/registry.ts: it names every backend (docs/adr/0014).',
  },
  sharedNamesBackend: {
    regex: '^\\./[^/]+/',
    message: 'Of the shared files in controller/backends/, only registry.ts names a backend folder (docs/adr/0014).',
  },
  kubernetesClient: {
    regex: '^@kubernetes/',
    message: 'controller/backends/<name>/client/ knows nothing of Kubernetes (STYLE §2).',
  },
};

/**
 * Folders of controller/backends/ that are no backend but building blocks several backends use
 * (the NoCloud seed ISO of libvirt, Proxmox and Cloud Hypervisor; the kit: the machine recipe,
 * the session pool, the wire kit). They follow a backend's rules (no other backend folder, no
 * reconciler) and every backend may import them.
 */
const SHARED_FOLDERS = ['cloud-init', 'kit'];
const notShared = `(?!(${SHARED_FOLDERS.join('|')})/)`;

/**
 * A file `depth` folders below controller/backends/ (1: backends/<name>/x.ts): a sibling folder of
 * its backend, or any backend folder reached the long way round (`../../backends/<name>/`).
 * @param {number} depth
 */
const otherBackend = (depth) => ({
  regex: `${up(depth)}(?!\\.\\./)${notShared}[^/]+/|${names('backends')}${notShared}[^/]+/`,
  message: `A backend folder imports no other backend folder: only the shared controller/backends/*.ts files, the shared folders (${SHARED_FOLDERS.join(', ')}), runtime/, scheduler/ and infra/ (STYLE §2).`,
});
/** @param {number} depth */
const registryFromBackend = (depth) => ({
  regex: `${up(depth)}registry\\.js$`,
  message: 'A backend does not import controller/backends/registry.ts: the registry imports the backends (docs/adr/0014).',
});
/**
 * What of controller/backends/ a client/ may import, as paths from there: the shared files and
 * the wire kit (endpoint, CA bundle, bounded body, deadline polling) know nothing of Kubernetes.
 */
const CLIENT_SHARED = ['backend-error.js', 'cancellation.js', 'kit/wire/*.js'];
/** A CLIENT_SHARED entry as a regex (`*`: one file name). @param {string} path */
const sharedPattern = (path) => path.replaceAll('.', '\\.').replaceAll('*', '[^/]+');
/** A file `depth` folders below controller/backends/ inside <name>/client/ or kit/wire/ (2: client/x.ts). @param {number} depth */
const leaveClient = (depth) => ({
  regex: `${up(depth - 1)}(?!\\.\\./(${CLIENT_SHARED.map(sharedPattern).join('|')})$)`,
  message: `controller/backends/<name>/client/ and kit/wire/ are wire protocol only: they import their own folder, node: and npm packages, and of controller/backends/ only ${CLIENT_SHARED.join(', ')}; nothing of runtime/, infra/ or the rest of the backend (STYLE §2).`,
});
/** Folders that are wire protocol only, as a client/ is. */
const WIRE_FOLDERS = ['controller/backends/*/client/', 'controller/backends/kit/wire/'];

/** The deepest folder level under controller/backends/ the generated zones cover. */
const MAX_BACKEND_DEPTH = 6;
/** @param {string} prefix @param {number} depth */
const below = (prefix, depth) => `${prefix}${'*/'.repeat(depth - 1)}*.ts`;

/** @type {{ name: string, files: string[], ignores?: string[], patterns: object[] }[]} */
const zones = [
  { name: 'infra', files: ['infra/**/*.ts'], patterns: [forbid.controller] },
  { name: 'runtime', files: ['controller/runtime/**/*.ts'], patterns: [forbid.reconcilers, forbid.backends, forbid.cli] },
  { name: 'scheduler', files: ['controller/scheduler/**/*.ts'], patterns: [forbid.reconcilers, forbid.backends, forbid.cli] },
  {
    name: 'reconcilers',
    files: ['controller/reconcilers/**/*.ts'],
    patterns: [forbid.cli, forbid.backendByName, forbid.registry],
  },
  {
    name: 'backends/*.ts',
    files: ['controller/backends/*.ts'],
    ignores: ['controller/backends/registry.ts'],
    patterns: [forbid.reconcilers, forbid.cli, forbid.sharedNamesBackend],
  },
  { name: 'backends/registry.ts', files: ['controller/backends/registry.ts'], patterns: [forbid.reconcilers, forbid.cli] },
];
for (let depth = 1; depth <= MAX_BACKEND_DEPTH; depth += 1) {
  zones.push({
    name: `backends/<name>/ depth ${depth}`,
    files: [below('controller/backends/*/', depth)],
    ignores: WIRE_FOLDERS.map((folder) => `${folder}**`),
    patterns: [forbid.reconcilers, forbid.cli, otherBackend(depth), registryFromBackend(depth)],
  });
}
for (let depth = 2; depth <= MAX_BACKEND_DEPTH; depth += 1) {
  zones.push({
    name: `backends/<name>/client/ and kit/wire/ depth ${depth}`,
    files: WIRE_FOLDERS.map((folder) => below(folder, depth - 1)),
    patterns: [forbid.kubernetesClient, leaveClient(depth)],
  });
}

/**
 * "Imports only types": value imports come only from `valuesFrom` (a specifier prefix, as a
 * regex; none when omitted) and from infra/api/conditions.ts (condition types and reasons are
 * `as const` values, STYLE §2 Naming). Everything else (infra/ schemas and validators, node:,
 * npm packages) only as `import type`.
 * @param {string} why @param {string} [valuesFrom]
 */
const typesOnly = (why, valuesFrom) => ({
  regex: `^${valuesFrom ? `(?!${valuesFrom})` : ''}(?!.*${names('infra')}api/conditions\\.js$)`,
  allowTypeImports: true,
  message: `${why} imports only types (and the reasons of infra/api/conditions.ts); use \`import type\` (STYLE §2).`,
});

export default defineConfig([
  globalIgnores(['dist/', 'lib/', 'imports/', 'target/', 'node_modules/']),
  {
    name: 'banlieue/typescript',
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // Type-aware rules read the project of tsconfig.json (infra, controller, test, imports).
        projectService: true,
        tsconfigRootDir: fileURLToPath(new URL('.', import.meta.url)),
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // STYLE §3: floating promises; an async callback where void is expected (event
      // handlers, timers) drops its rejection the same way.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // STYLE §3: no `any`.
      '@typescript-eslint/no-explicit-any': 'error',
      // The house style: `import { f, type T }`; keeps type-only edges visible to the layering rules.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    // Size limits for product code, set a little above today's largest functions and files
    // (tests are tables and stories, and stay unbounded): a function past them is split into
    // named steps, a file into rooms by job.
    name: 'banlieue/size',
    files: ['controller/**/*.ts', 'infra/**/*.ts', 'build/**/*.ts'],
    rules: {
      complexity: ['error', 20],
      'max-depth': ['error', 4],
      'max-nested-callbacks': ['error', 4],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
    },
  },
  ...zones.map(({ name, files, ignores, patterns }) => ({
    name: `banlieue/layering/${name}`,
    files,
    ...(ignores ? { ignores } : {}),
    rules: { 'no-restricted-imports': /** @type {import('eslint').Linter.RuleEntry} */ (['error', { patterns }]) },
  })),
  {
    name: 'banlieue/types-only/scheduler',
    files: ['controller/scheduler/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        // Values from the scheduler's own files (`./x.js`; it has no subfolders).
        { patterns: [typesOnly('controller/scheduler/ (pure: filter, score, place; no I/O, no clock)', '\\./')] },
      ],
    },
  },
  {
    name: 'banlieue/types-only/mapping',
    files: ['controller/backends/*/mapping.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        // Values only from the pure rules every backend names its failure domains and publishes their capacity by.
        {
          patterns: [
            typesOnly('controller/backends/<name>/mapping.ts (pure: spec → request, backend VM → status)', '\\.\\./(failure-domain-name|capacity)\\.js$'),
          ],
        },
      ],
    },
  },
]);
