import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main as banlieue } from '../../../controller/cli/main.js';
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

  // The CLI run in process (its argument parsing, defaults and output), not
  // spawned: a unit test starts no process, so a busy machine cannot time it out.
  it('equals what `banlieue bootstrap operator --dry-run` prints', async () => {
    let printed = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    });
    let rc: number;
    try {
      rc = await banlieue(['node', 'banlieue', 'bootstrap', 'operator', '--dry-run']);
    } finally {
      write.mockRestore();
    }
    expect(rc).toBe(0);
    const concatenated = distFiles.map((f) => readFileSync(join(DIST, f), 'utf8')).join('---\n');
    expect(printed).toBe(concatenated);
  });
});
