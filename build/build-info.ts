// The build info file build/build-info.sh writes (KEY=value lines), read by
// the build steps that stamp it into what they make.
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  /** package.json version, e.g. 0.1.0. */
  readonly version: string;
  /** git HEAD, `-dirty` when tracked files differed. */
  readonly commit: string;
  /** Seconds since the epoch every timestamp of the build is set to (reproducible-builds.org). */
  readonly sourceDateEpoch: number;
}

export function readBuildInfo(path: string): BuildInfo {
  const values = new Map(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
  const version = values.get('VERSION');
  const commit = values.get('COMMIT');
  const epoch = Number(values.get('SOURCE_DATE_EPOCH'));
  if (!version || !commit || !Number.isInteger(epoch)) throw new Error(`${path}: VERSION, COMMIT and SOURCE_DATE_EPOCH are required`);
  return { version, commit, sourceDateEpoch: epoch };
}
