import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderInstall, renderInstallYaml, type ManifestObject } from '../../../infra/install/render.js';

const f = (o: ManifestObject): string => `${o.kind} ${o.metadata.name}`;

const DIST = 'dist';
const distFiles = readdirSync(DIST)
  .filter((f) => f.endsWith('.k8s.yaml'))
  .sort();

describe('dist/', () => {
  it('holds one file per install chart, numbered in apply order', () => {
    expect(distFiles).toEqual(renderInstall().map((c, i) => `${String(i).padStart(4, '0')}-${c.name}.k8s.yaml`));
  });

  it('labels every object it holds cluster.x-k8s.io/provider: infrastructure-banlieue', () => {
    const objects = distFiles.flatMap((f) => parseAllDocuments(readFileSync(join(DIST, f), 'utf8')).map((d) => d.toJS() as ManifestObject));
    expect(objects.length).toBeGreaterThan(20);
    for (const o of objects) expect(o.metadata.labels?.['cluster.x-k8s.io/provider'], `${f(o)}`).toBe('infrastructure-banlieue');
  });

  it('equals the in-process render byte for byte', () => {
    const concatenated = distFiles.map((f) => readFileSync(join(DIST, f), 'utf8')).join('---\n');
    expect(renderInstallYaml()).toBe(concatenated);
  });

  it('equals what `banlieue bootstrap operator --dry-run` prints', () => {
    const printed = execFileSync('npx', ['tsx', 'controller/cli/run.ts', 'bootstrap', 'operator', '--dry-run'], {
      encoding: 'utf8',
    });
    const concatenated = distFiles.map((f) => readFileSync(join(DIST, f), 'utf8')).join('---\n');
    expect(printed).toBe(concatenated);
    // A spawned tsx process: minutes on a busy machine, never a 5 s default.
  }, 180_000);
});
