// `make image-push IMAGE=<ref>` into a real registry (go-containerregistry's,
// from build/tools.sh) that listens in a network namespace of the test's own,
// so nothing leaves this machine's loopback.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { readOciArchive, type OciImage } from '../support/oci-archive.js';
import { imageArchive, makeRelease, PACKAGE_VERSION, runLocked } from '../support/release-build.js';

const run = promisify(execFile);

/** Start the registry, wait for it (a bounded number of tries), push with make, read back with crane. */
const SCRIPT = `set -euo pipefail
ip link set lo up
"$REGISTRY" -port 5000 2>/dev/null & registry=$!
trap 'kill $registry' EXIT
for _ in $(seq 600); do "$CRANE" catalog 127.0.0.1:5000 >/dev/null 2>&1 && break; sleep 0.1; done
make --no-print-directory image-push IMAGE="$REF" >&2
echo "digest $("$CRANE" digest "$REF")"
echo "config $("$CRANE" config "$REF")"
`;

describe('make image-push', () => {
  let image: OciImage;
  let tools: Record<string, string>;

  beforeAll(async () => {
    await makeRelease(['image']);
    image = await readOciArchive(imageArchive());
    const { stdout } = await run('build/tools.sh', [], { timeout: 30 * 60_000 });
    tools = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((l) => [l.split(' ')[0], l.split(' ')[2]]),
    );
  }, 1_800_000);

  it('pushes the image under the reference given, with the digest it was built with', async () => {
    const ref = `127.0.0.1:5000/banlieue:v${PACKAGE_VERSION}`;
    const out = await runLocked(['env', `REGISTRY=${tools.registry}`, `CRANE=${tools.crane}`, `REF=${ref}`, 'unshare', '--net', '--', 'bash', '-c', SCRIPT]);
    const line = (key: string): string =>
      out
        .split('\n')
        .find((l) => l.startsWith(`${key} `))
        ?.slice(key.length + 1) ?? '';
    expect(line('digest')).toBe(image.digest);
    expect(JSON.parse(line('config'))).toEqual(image.config);
  }, 1_800_000);
});
