// The release stamp: COMMIT is HEAD, with -dirty only when a tracked file's
// content differs; a file rewritten with the same bytes (as `make synth` does
// to dist/) leaves it clean.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = join(import.meta.dirname, '..', '..', '..', 'build', 'build-info.sh');

describe('build/build-info.sh', () => {
  const repo = mkdtempSync(join(tmpdir(), 'banlieue-build-info-'));
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' }).trim();
  mkdirSync(join(repo, 'build'));
  copyFileSync(SCRIPT, join(repo, 'build', 'build-info.sh'));
  writeFileSync(join(repo, 'package.json'), '{"version":"1.2.3"}\n');
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'first');
  const head = git('rev-parse', 'HEAD');
  const stamp = (): string => {
    execFileSync('bash', [join(repo, 'build', 'build-info.sh'), join(repo, 'out', 'info')]);
    return readFileSync(join(repo, 'out', 'info'), 'utf8');
  };
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('stays clean when a tracked file is rewritten with the same content, and says dirty when it changes', () => {
    writeFileSync(join(repo, 'package.json'), '{"version":"1.2.3"}\n');
    // A later mtime, as a rewrite a second or more after the commit has (git keeps whole seconds).
    const later = new Date(Date.now() + 10_000);
    utimesSync(join(repo, 'package.json'), later, later);
    expect(stamp()).toContain(`VERSION=1.2.3\nCOMMIT=${head}\n`);
    writeFileSync(join(repo, 'package.json'), '{"version":"1.2.3" }\n');
    expect(stamp()).toContain(`COMMIT=${head}-dirty\n`);
  });
});
