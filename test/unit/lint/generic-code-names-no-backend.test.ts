// Generic code names no backend (docs/adr/0014): what differs between backends
// is read from the backend list (infra/api/backends.ts) and the descriptors
// (controller/backends/registry.ts), so a new backend is its own files and a
// few registration lines. This reads the code of every generic file (its
// identifiers, strings and template text; comments may give examples) for any
// backend's name, title, providerID scheme or kind prefix.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BACKEND_APIS } from '../../../infra/api/backends.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Folders whose code serves every backend alike. */
const GENERIC = ['infra', 'controller/reconcilers', 'controller/runtime', 'controller/scheduler'];
/** The shared files of controller/backends/ (its folders are the backends and their shared building blocks). */
const SHARED_BACKEND_FILES = 'controller/backends';

/** Where backends are named on purpose: each backend's API file, and the lists that register them. */
const NAMING = [
  ...BACKEND_APIS.map((b) => `infra/api/infrastructure.banlieue.io/v1alpha1/${b.name}-machine.ts`),
  'infra/api/backends.ts',
  'infra/authoring/kinds.ts',
  'controller/backends/registry.ts',
];

function tsFiles(dir: string, recursive: boolean): string[] {
  return readdirSync(join(root, dir), { recursive, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

const genericFiles = [...GENERIC.flatMap((d) => tsFiles(d, true)), ...tsFiles(SHARED_BACKEND_FILES, false)].filter((f) => !NAMING.includes(f)).sort();

/** Each backend's words, lower case: `vsphere`, `cloud-hypervisor`, `cloudhypervisor`, `cloud hypervisor`, `proxmox ve`, `vsphere` (VSphereMachine). */
const words = [
  ...new Set(
    BACKEND_APIS.flatMap((b) =>
      [b.name, b.name.replaceAll('-', ''), b.title, b.providerIDScheme, b.machine.kind.replace(/Machine$/, '')].map((w) => w.toLowerCase()),
    ),
  ),
];

const TEXTUAL = new Set([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.PrivateIdentifier,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** The identifiers, string literals, template text and regular expressions of `source` that hold a backend's word, by line: comments are not code. */
function backendWordsIn(source: string): string[] {
  const file = ts.createSourceFile('code.ts', source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (TEXTUAL.has(node.kind)) {
      const text = node.getText(file);
      if (words.some((w) => text.toLowerCase().includes(w))) found.push(`line ${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('Generic code names no backend', () => {
  it('reads at least the folders it guards', () => {
    expect(genericFiles).toContain('infra/api/banlieue.io/v1alpha1/provider.ts');
    expect(genericFiles).toContain('infra/clusterctl/cluster-templates.ts');
    expect(genericFiles).toContain('controller/reconcilers/provider/endpoint.ts');
    expect(genericFiles).toContain('controller/backends/descriptor.ts');
    expect(genericFiles).not.toContain('controller/backends/registry.ts');
  });

  it.each([
    ['a CEL rule in a string', 'const rule = "self.name != \'cloud-hypervisor\'";', 1],
    ['an identifier', "import { vsphereApi } from './x.js';", 1],
    ['a template literal', 'const kind = `${prefix}ProxmoxMachine`;', 1],
    ['a regular expression', 'const scheme = /^qemu\\+tls:|libvirt/;', 1],
    ['a comment giving an example', '// e.g. a vCenter or a libvirt host\nconst x = 1;', 0],
  ])('finds %s', (_, code, count) => {
    expect(backendWordsIn(code)).toHaveLength(count);
  });

  it.each(genericFiles)('%s', (file) => {
    expect(backendWordsIn(readFileSync(join(root, file), 'utf8'))).toEqual([]);
  });
});
