// The kubectl commands the docs tell users to type: read from README.md,
// docs/**/*.md and examples/**, as quoted there (fenced blocks, inline code,
// comments of example files), and the resources each one names.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** One kubectl command as a file quotes it. */
export interface QuotedCommand {
  /** From the repository root. */
  readonly file: string;
  readonly line: number;
  /** From `kubectl` on, comments and continuation backslashes removed. */
  readonly command: string;
}

/** A resource argument of a command: what kubectl maps to a group and resource. */
export interface NamedResource {
  readonly verb: string;
  /** As typed, one of a comma list, without `/name`; for explain, with its field path. */
  readonly resource: string;
}

/** The files whose commands users copy. */
export function docFiles(root: string): string[] {
  const under = (dir: string, keep: (f: string) => boolean): string[] =>
    (readdirSync(join(root, dir), { recursive: true }) as string[])
      .map((f) => join(dir, f))
      .filter((f) => statSync(join(root, f)).isFile() && keep(f))
      .sort();
  return ['README.md', ...under('docs', (f) => f.endsWith('.md')), ...under('examples', () => true)];
}

/** Every kubectl command quoted in `files`. */
export function quotedKubectlCommands(root: string, files: readonly string[]): QuotedCommand[] {
  return files.flatMap((file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const found = file.endsWith('.md') ? fromMarkdown(text) : fromLines(text.split('\n'), 0);
    return found.map(({ line, command }) => ({ file, line, command }));
  });
}

interface Found {
  readonly line: number;
  readonly command: string;
}

/** Fenced blocks line by line; elsewhere, inline code spans (which may wrap). */
function fromMarkdown(text: string): Found[] {
  const lines = text.split('\n');
  const found: Found[] = [];
  let prose: string[] = [];
  let proseStart = 0;
  let fence: string[] | undefined;
  let fenceStart = 0;
  const flushProse = (): void => {
    found.push(...fromInlineCode(prose.join('\n'), proseStart));
    prose = [];
  };
  lines.forEach((l, i) => {
    if (/^\s*(```|~~~)/.test(l)) {
      if (fence) {
        found.push(...fromLines(fence, fenceStart));
        fence = undefined;
        proseStart = i + 1;
      } else {
        flushProse();
        fence = [];
        fenceStart = i + 1;
      }
    } else if (fence) fence.push(l);
    else prose.push(l);
  });
  flushProse();
  return found;
}

function fromInlineCode(text: string, firstLine: number): Found[] {
  return [...text.matchAll(/`([^`]+)`/g)].flatMap((m) => {
    const code = m[1] ?? '';
    const at = code.search(/\bkubectl\b/);
    if (at < 0) return [];
    const line = firstLine + text.slice(0, m.index).split('\n').length;
    return [{ line, command: untilCommandEnds(code.slice(at).replace(/\s+/g, ' ')) }];
  });
}

/** Lines of a code block or of a file's comments: from `kubectl` to the end of the line, `\` continuing it. */
function fromLines(lines: readonly string[], firstLine: number): Found[] {
  const found: Found[] = [];
  for (let i = 0; i < lines.length; i++) {
    const at = (lines[i] ?? '').search(/\bkubectl\s/);
    if (at < 0) continue;
    const start = i;
    let command = (lines[i] ?? '').slice(at);
    while (/\\\s*$/.test(command) && i + 1 < lines.length) {
      i++;
      command = `${command.replace(/\\\s*$/, '')} ${(lines[i] ?? '').replace(/^\s*#?\s*/, '')}`;
    }
    found.push({ line: firstLine + start + 1, command: untilCommandEnds(command) });
  }
  return found;
}

/** Cut at a shell comment, pipe or command separator outside quotes. */
function untilCommandEnds(command: string): string {
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if ((c === '#' && /\s/.test(command[i - 1] ?? ' ')) || c === '|' || c === ';' || command.startsWith('&&', i)) {
      return command.slice(0, i).trim();
    }
  }
  return command.trim();
}

/** Words as a shell splits them (quotes removed). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
}

/** kubectl flags whose value may follow as the next word. */
const FLAGS_WITH_VALUE = new Set([
  '-n',
  '--namespace',
  '-l',
  '--selector',
  '-o',
  '--output',
  '-p',
  '--patch',
  '--type',
  '-f',
  '--filename',
  '--as',
  '--as-group',
  '--field-manager',
  '--for',
  '--timeout',
  '--context',
  '--kubeconfig',
  '--subresource',
  '-c',
  '--container',
  '--duration',
]);

/** Verbs whose first argument is a resource (or a comma list, or resource/name). */
const RESOURCE_VERBS = new Set(['get', 'describe', 'annotate', 'label', 'patch', 'delete', 'edit', 'wait', 'explain']);

/** The resources `command` names: `<verb> <resource>[,<resource>]` and `auth can-i <verb> <resource>`. */
export function resourcesNamed(command: string): NamedResource[] {
  const args: string[] = [];
  let flagValue = false;
  for (const word of words(command).slice(1)) {
    if (flagValue) flagValue = false;
    else if (word.startsWith('-')) flagValue = FLAGS_WITH_VALUE.has(word);
    else args.push(word);
  }
  const [verb = '', first = '', , third = ''] = args;
  const withoutName = (resource: string): string => resource.split('/')[0] ?? '';
  if (verb === 'auth' && first === 'can-i' && third) return [{ verb: 'auth can-i', resource: withoutName(third) }];
  if (!RESOURCE_VERBS.has(verb) || !first) return [];
  if (verb === 'explain') return [{ verb, resource: first }];
  return withoutName(first)
    .split(',')
    .filter((r) => r !== '')
    .map((resource) => ({ verb, resource }));
}
