// The documents `banlieue validate` reads: files, directories (recursively,
// *.yaml, *.yml and *.json) and stdin (`-`, or no path at all).
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CliError } from '../cli-error.js';
import type { InputDocument } from './input-document.js';

const MANIFEST = /\.(ya?ml|json)$/;

async function manifestsUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries
      .sort((a, b) => a.name.localeCompare(b.name))
      .map(async (e) => {
        const path = join(dir, e.name);
        if (e.isDirectory()) return manifestsUnder(path);
        return e.isFile() && MANIFEST.test(e.name) ? [path] : [];
      }),
  );
  return nested.flat();
}

/** Every document of `text`, as read from `file`. */
export function parseDocuments(file: string, text: string): InputDocument[] {
  return (
    parseAllDocuments(text)
      .map((doc, index) =>
        doc.errors.length > 0
          ? { file, index, object: undefined, parseError: doc.errors[0]?.message ?? 'parse error' }
          : { file, index, object: doc.toJS() as unknown },
      )
      // An empty document (a trailing `---`, comments only) is no object.
      .filter((d) => d.parseError !== undefined || (d.object !== null && d.object !== undefined))
  );
}

/** The documents of `paths`, in order; `-` (or no path) is stdin. */
export async function readDocuments(paths: readonly string[], readStdin: () => Promise<string>): Promise<InputDocument[]> {
  const docs: InputDocument[] = [];
  for (const path of paths.length > 0 ? paths : ['-']) {
    if (path === '-') {
      docs.push(...parseDocuments('-', await readStdin()));
      continue;
    }
    const info = await stat(path).catch(() => undefined);
    if (!info) throw new CliError(`${path}: no such file or directory`);
    const files = info.isDirectory() ? await manifestsUnder(path) : [path];
    for (const file of files) docs.push(...parseDocuments(file, await readFile(file, 'utf8')));
  }
  return docs;
}
