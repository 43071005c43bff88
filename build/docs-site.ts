// `make docs-site`: the static docs site, built by VitePress from README.md,
// CHANGELOG.md and docs/ (build/docs-site-config.ts) into target/docs-site.
// It fails on a dead link. VitePress reads its configuration from
// <root>/.vitepress/ and keeps its scratch files there, and the pages it
// renders import Vue from beside that root: so the root is a folder under
// target/ holding only a configuration that imports ours, made for the build
// and removed after it.
//
//   npx tsx build/docs-site.ts [--src <dir>] [--out <dir>]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'vitepress';
import type { DocsSiteProps } from './docs-site-config.js';

const repository = resolve(import.meta.dirname, '..');
const target = join(repository, 'target');
const { values } = parseArgs({ options: { src: { type: 'string' }, out: { type: 'string' } } });
const props: DocsSiteProps = {
  srcDir: resolve(values.src ?? repository),
  outDir: resolve(values.out ?? join(target, 'docs-site')),
  cacheDir: join(target, 'docs-site-cache'),
};

mkdirSync(target, { recursive: true });
const root = mkdtempSync(join(target, 'docs-site-root-'));
try {
  mkdirSync(join(root, '.vitepress'));
  writeFileSync(
    join(root, '.vitepress', 'config.mts'),
    `import { docsSiteConfig } from ${JSON.stringify(join(repository, 'build', 'docs-site-config.ts'))};\nexport default docsSiteConfig(${JSON.stringify(props)});\n`,
  );
  await build(root);
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(`wrote the docs site to ${props.outDir}`);
