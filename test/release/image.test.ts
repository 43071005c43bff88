// `make image`: an OCI image archive made without a container
// daemon or a base image, that two builds make byte for byte the same.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOciArchive, type OciImage } from '../support/oci-archive.js';
import { imageArchive, makeRelease, PACKAGE_VERSION } from '../support/release-build.js';

const run = promisify(execFile);
const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('make image', () => {
  const elsewhere = mkdtempSync(join(tmpdir(), 'banlieue-build-'));
  let image: OciImage;

  beforeAll(async () => {
    await makeRelease(['image']);
    image = await readOciArchive(imageArchive());
  }, 1_800_000);

  afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

  it('gives the same digest when built again from scratch (bundle, single executable, layer, archive)', async () => {
    await makeRelease(['image'], { BUILD_DIR: elsewhere });
    const again = await readOciArchive(imageArchive(elsewhere));
    expect(again.digest).toBe(image.digest);
    expect(sha256(imageArchive(elsewhere))).toBe(sha256(imageArchive()));
  }, 1_800_000);

  it('is tagged with the release tag the install names and carries the OCI annotations', () => {
    expect(image.refName).toBe(`v${PACKAGE_VERSION}`);
    const labels = image.config.config.Labels ?? {};
    for (const key of ['title', 'version', 'revision', 'created', 'source', 'licenses']) expect(labels[`org.opencontainers.image.${key}`]).toBeTruthy();
    expect(labels['org.opencontainers.image.version']).toBe(PACKAGE_VERSION);
    expect(image.manifest.annotations).toEqual(labels);
  });

  it('runs the single executable as nonroot (65532) on linux/amd64', () => {
    expect(image.config).toMatchObject({ os: 'linux', architecture: 'amd64' });
    expect(image.config.config).toMatchObject({ User: '65532:65532', Entrypoint: ['/usr/local/bin/banlieue'] });
  });

  it("holds no shell, no package manager and nothing owned by another user than root, but for nonroot's home", async () => {
    const [layer] = image.manifest.layers;
    if (!layer) throw new Error('the image has no layer');
    const layout = mkdtempSync(join(tmpdir(), 'banlieue-oci-'));
    try {
      await run('tar', ['-xf', imageArchive(), '-C', layout, `blobs/sha256/${layer.digest.slice('sha256:'.length)}`]);
      const { stdout } = await run('tar', ['-tvzf', join(layout, 'blobs', 'sha256', layer.digest.slice('sha256:'.length)), '--numeric-owner'], {
        maxBuffer: 64 << 20,
      });
      const entries = stdout
        .trim()
        .split('\n')
        .map((l) => ({ owner: l.split(/\s+/)[1], path: l.split(/\s+/)[5] ?? '' }));
      const paths = entries.map((e) => e.path.replace(/\/$/, ''));
      for (const absent of ['bin/sh', 'usr/bin/sh', 'bin/bash', 'usr/bin/bash', 'usr/bin/dpkg', 'usr/bin/apt-get']) expect(paths).not.toContain(absent);
      expect(paths).toContain('usr/local/bin/banlieue');
      expect(entries.filter((e) => e.owner !== '0/0').map((e) => `${e.owner} ${e.path}`)).toEqual(['65532/65532 home/nonroot/']);
    } finally {
      rmSync(layout, { recursive: true, force: true });
    }
  }, 300_000);
});
