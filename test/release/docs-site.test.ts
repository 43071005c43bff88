// `make docs-site`: VitePress builds the docs site from README.md, CHANGELOG.md
// and docs/ with no network at all (each build runs in a network namespace of
// its own), and fails on a link to a page or a file that does not exist.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPOSITORY_URL } from '../../build/docs-site-config.js';

const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'banlieue-docs-site-'));

/** Builds the site of `src` into `out` where no network interface but loopback exists; resolves with the output, rejects with it. */
async function buildSite(src: string, out: string): Promise<string> {
  try {
    const { stdout, stderr } = await run('unshare', ['--net', '--map-root-user', 'npx', 'tsx', 'build/docs-site.ts', '--src', src, '--out', out], {
      maxBuffer: 64 << 20,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** A checkout of a README, one guide and the files each names. */
function tree(name: string, files: Readonly<Record<string, string>>): string {
  const root = join(scratch, name);
  for (const [path, text] of Object.entries({ 'README.md': '# tiny\n\n[guide](docs/guide.md)\n', 'docs/guide.md': '# Guide\n', ...files })) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('make docs-site', () => {
  const out = join(scratch, 'site');
  beforeAll(async () => {
    await buildSite('.', out);
  }, 900_000);

  it('has the README as its home page, the CHANGELOG, every guide and every architecture decision', () => {
    const pages = (readdirSync('docs', { recursive: true }) as string[]).filter((f) => f.endsWith('.md'));
    expect(pages.length).toBeGreaterThan(30);
    const html = (page: string): string => readFileSync(join(out, page), 'utf8');
    expect(html('index.html')).toContain('backend-agnostic virtual-machine API');
    expect(html('CHANGELOG.html')).toContain('0.1.0');
    for (const page of pages) {
      const heading = /^# (.+)$/m.exec(readFileSync(join('docs', page), 'utf8'))?.[1]?.replace(/`/g, '') ?? '';
      expect(html(join('docs', page.replace(/\.md$/, '.html')))).toContain(heading.replace(/&/g, '&amp;').replace(/</g, '&lt;'));
    }
  });

  it('sends a link to a file that is no page, such as the examples, to the repository', () => {
    expect(readFileSync(join(out, 'index.html'), 'utf8')).toContain(`href="${REPOSITORY_URL}/tree/main/examples"`);
  });
});

describe('a docs site with a dead link', () => {
  it('is not built when a link names a page that does not exist, and the error names the link', async () => {
    const src = tree('dead-page', { 'docs/guide.md': '# Guide\n\nSee [the missing page](missing.md).\n' });
    await expect(buildSite(src, join(scratch, 'dead-page-site'))).rejects.toThrow(
      /docs\/guide\.md: link to missing\.md, which names no page and no file of the repository/,
    );
  }, 600_000);

  it('is not built when a link names a file of the repository that does not exist, and the error names the link', async () => {
    const src = tree('dead-file', { 'docs/guide.md': '# Guide\n\nSee [the example](../examples/gone.yaml).\n', 'examples/here.yaml': 'kind: List\n' });
    await expect(buildSite(src, join(scratch, 'dead-file-site'))).rejects.toThrow(
      /docs\/guide\.md: link to \.\.\/examples\/gone\.yaml, which names no page and no file of the repository/,
    );
  }, 600_000);
});
