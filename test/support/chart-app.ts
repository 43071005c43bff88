// An App for charts a test reads with toJson(). cdk8s's Testing.app() makes a
// temporary directory on every call and leaves it behind; this one names a
// single directory, written only by a test that synthesizes.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'cdk8s';

export function testApp(): App {
  return new App({ outdir: join(tmpdir(), 'banlieue-test-charts') });
}
