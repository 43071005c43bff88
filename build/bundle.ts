// Bundles the banlieue CLI into one CommonJS file with esbuild, the script of
// the single executable (build/binary.sh) and so of the image: a Node
// single-executable application runs one CommonJS script and `require`s only
// Node's built-in modules, so every dependency is inside the bundle.
//
//   npx tsx build/bundle.ts <build-info file> <out.cjs>
//
// The bundle is reproducible: esbuild's output depends only on its inputs, and
// the one input that is not a source file, the build info (version, commit),
// comes from the file build/build-info.sh writes.
import { argv, exit, stderr } from 'node:process';
import { build } from 'esbuild';
import { bundleOptions } from './bundle-options.js';
import { readBuildInfo } from './build-info.js';

async function main(): Promise<void> {
  const [infoPath, out] = argv.slice(2);
  if (!infoPath || !out) throw new Error('usage: bundle.ts <build-info file> <out.cjs>');
  const result = await build(bundleOptions(readBuildInfo(infoPath), out));
  if (result.errors.length > 0) exit(1);
}

main().catch((err: unknown) => {
  stderr.write(`bundle.ts: ${err instanceof Error ? err.message : String(err)}\n`);
  exit(1);
});
