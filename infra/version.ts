// banlieue's own version, read from the package.json that ships with it (works
// from the TypeScript sources and from the compiled lib/ alike).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface PackageJson {
  name: string;
  version: string;
}

function findPackageJson(start: string): PackageJson {
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as PackageJson;
      if (pkg.name === 'banlieue') return pkg;
    }
    if (dirname(dir) === dir) throw new Error('banlieue package.json not found');
  }
}

export const PACKAGE_VERSION: string = findPackageJson(dirname(fileURLToPath(import.meta.url))).version;

/** The release tag of this build, e.g. v0.1.0. */
export const RELEASE_TAG = `v${PACKAGE_VERSION}`;

/**
 * The git commit a release build (the single executable and the image) was
 * made from; build/bundle.ts replaces this module with constants. Unset when
 * running from the sources or lib/.
 */
export const BUILD_COMMIT: string | undefined = undefined;
