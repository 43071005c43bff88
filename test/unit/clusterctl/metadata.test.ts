import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clusterctlMetadata } from '../../../infra/clusterctl/metadata.js';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

describe('clusterctl metadata', () => {
  it("has a v1beta2 releaseSeries entry for package.json's major.minor", () => {
    const [major, minor] = pkg.version.split('.').map(Number);
    const meta = clusterctlMetadata(pkg.version);
    expect(meta.apiVersion).toBe('clusterctl.cluster.x-k8s.io/v1alpha3');
    expect(meta.kind).toBe('Metadata');
    expect(meta.releaseSeries).toContainEqual({ major, minor, contract: 'v1beta2' });
  });

  it.each([
    ['0.3.2', ['0.3', '0.2', '0.1']],
    ['1.2.0', ['1.2', '1.1', '1.0', '0.1']],
  ])('lists every series up to %s', (version, expected) => {
    expect(clusterctlMetadata(version).releaseSeries.map((s) => `${s.major}.${s.minor}`)).toEqual(expected);
  });

  it('refuses a version that is not semver', () => {
    expect(() => clusterctlMetadata('latest')).toThrow('version "latest"');
  });
});
