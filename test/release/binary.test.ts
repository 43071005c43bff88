// `make binary`: one executable for hosts, the CLI and every role in it.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRelease, PACKAGE_VERSION } from '../support/release-build.js';

const run = promisify(execFile);
const BINARY = resolve('target/bin/banlieue');

describe('make binary', () => {
  beforeAll(async () => {
    await makeRelease(['binary']);
  }, 1_800_000);

  it('prints its version and the commit it was built from', async () => {
    const { stdout } = await run(BINARY, ['--version'], { timeout: 120_000 });
    const head = (await run('git', ['rev-parse', 'HEAD'])).stdout.trim();
    expect(stdout.trim()).toMatch(new RegExp(`^${PACKAGE_VERSION.replace(/\./g, '\\.')} \\(commit ${head}(-dirty)?\\)$`));
  }, 180_000);

  it('renders the install without Node, npm or the sources beside it', async () => {
    const { stdout, stderr } = await run(BINARY, ['bootstrap', 'operator', '--dry-run', '--registry', 'registry.example.com/mirror'], {
      cwd: '/',
      env: { PATH: '/nonexistent' },
      timeout: 120_000,
      maxBuffer: 64 << 20,
    });
    expect(stderr).toBe('');
    expect(stdout).toContain('kind: CustomResourceDefinition');
    expect(stdout).toContain(`image: registry.example.com/mirror/banlieue:v${PACKAGE_VERSION}`);
  }, 180_000);
});
