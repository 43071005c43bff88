// The programs the tests start, bundled by esbuild into one file each and run
// by plain node: the banlieue CLI (build/bundle-options.ts, as the image's)
// and the simulators that run as processes. Through tsx every start cost
// ~5 s of CPU (its loader transforms and resolves each module), a bundle's
// ~0.4 s; `make test` starts roles and simulated VMMs hundreds of times on a
// 2-core machine, and a replacement replica's start raced its Lease.
// Each process bundles a program once; the file is named by its content, so
// processes building the same tree share it and a changed tree never runs a
// stale one.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, buildSync } from 'esbuild';
import { bundleOptions } from '../../build/bundle-options.js';
import { PACKAGE_VERSION } from '../../infra/version.js';

const DIR = fileURLToPath(new URL('../../target/test-bundle', import.meta.url));
/** Bundles of another tree older than this are removed (a lane still running from one has loaded it). */
const KEEP_MS = 6 * 3600_000;

let cli: Promise<string> | undefined;
const programs = new Map<string, string>();

/** The path of this tree's CLI bundle, built on first use. */
export function cliBundle(): Promise<string> {
  cli ??= build({ ...bundleOptions({ version: PACKAGE_VERSION }, 'banlieue.cjs'), write: false, logLevel: 'error' }).then((result) =>
    store('banlieue', 'cjs', result.outputFiles?.[0]?.contents),
  );
  return cli;
}

/** `[node, [bundle, ...args]]`: a banlieue command line for spawn(). */
export async function banlieueCommand(args: readonly string[]): Promise<[string, string[]]> {
  return [process.execPath, [await cliBundle(), ...args]];
}

/**
 * A test program (`entry`, a TypeScript file) as one ES module, built on first
 * use; synchronous, for the callers that write a wrapper script. Its modules'
 * `import.meta.url` is `metaUrlOf`'s (default: the entry's): the bundle lives
 * elsewhere, and a module that reads a file beside it must still find it.
 */
export function programBundle(entry: string, metaUrlOf: string = entry): string {
  const key = `${entry}\0${metaUrlOf}`;
  const known = programs.get(key);
  if (known) return known;
  const result = buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'error',
    // The CommonJS dependencies (ajv, yaml) require Node's modules.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    define: { 'import.meta.url': JSON.stringify(pathToFileURL(metaUrlOf).href) },
  });
  const path = store(entry.replace(/^.*\//, '').replace(/\.ts$/, ''), 'mjs', result.outputFiles[0]?.contents);
  programs.set(key, path);
  return path;
}

function store(name: string, extension: string, contents: Uint8Array | undefined): string {
  if (!contents) throw new Error(`esbuild wrote no bundle of ${name}`);
  mkdirSync(DIR, { recursive: true });
  const path = join(DIR, `${name}-${createHash('sha256').update(contents).digest('hex').slice(0, 16)}.${extension}`);
  // Written aside, then renamed: a process starting from the same name sees all of it or nothing.
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
  prune(path);
  return path;
}

function prune(current: string): void {
  for (const name of readdirSync(DIR)) {
    const path = join(DIR, name);
    if (path === current) continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_MS) rmSync(path, { force: true });
    } catch {
      // Another process removed it first.
    }
  }
}
