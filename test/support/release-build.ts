// The release build as the tests use it: through make, so a test exercises the
// targets a user runs and their caches (build/README.md). Runs are serialised
// by a lock in target/, since test files of several projects build at once.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PACKAGE_VERSION = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

/** `argv` under the release-build lock; resolves with stdout, rejects with all the output. */
export async function runLocked(argv: readonly string[]): Promise<string> {
  mkdirSync('target', { recursive: true });
  try {
    // A cold build fetches Node and the Debian packages and builds crane: minutes on 2 busy cores.
    const { stdout } = await run('flock', ['target/.release-build.lock', ...argv], { timeout: 30 * 60_000, maxBuffer: 64 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${argv.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** `make <targets> [VAR=value...]`. */
export function makeRelease(targets: readonly string[], vars: Readonly<Record<string, string>> = {}): Promise<string> {
  return runLocked(['make', '--no-print-directory', ...targets, ...Object.entries(vars).map(([k, v]) => `${k}=${v}`)]);
}

/** Where `make image` writes the archive, for a BUILD_DIR. */
export function imageArchive(buildDir = 'target'): string {
  return `${buildDir}/image/banlieue-${PACKAGE_VERSION}.oci.tar`;
}
