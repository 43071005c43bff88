// `make release`: every release asset in target/release/, and SHA256SUMS that
// lists each of them with its digest.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { grafanaDashboard } from '../../infra/metrics/grafana-dashboard.js';
import { RELEASE_TAG } from '../../infra/version.js';
import { makeRelease, PACKAGE_VERSION } from '../support/release-build.js';

const DIR = 'target/release';

describe('make release', () => {
  beforeAll(async () => {
    await makeRelease(['release']);
  }, 1_800_000);

  it('writes the clusterctl assets, the cluster templates, the image archive, the binary, the Grafana dashboard, the npm package and SHA256SUMS', () => {
    // clusterctl's names: the default flavor, one per backend (`--flavor proxmox`), the clusterclass flavor and its class.
    const templates = [
      'cluster-template.yaml',
      'cluster-template-proxmox.yaml',
      'cluster-template-libvirt.yaml',
      'cluster-template-cloud-hypervisor.yaml',
      'cluster-template-clusterclass.yaml',
      'clusterclass-banlieue-vsphere.yaml',
    ];
    expect(readdirSync(DIR).sort()).toEqual(
      [
        'infrastructure-components.yaml',
        'metadata.yaml',
        ...templates,
        `banlieue-${PACKAGE_VERSION}.oci.tar`,
        'banlieue-linux-amd64',
        'banlieue-grafana-dashboard.json',
        `banlieue-${PACKAGE_VERSION}.tgz`,
        'SHA256SUMS',
      ].sort(),
    );
  });

  it('lists every other asset in SHA256SUMS with its sha256', () => {
    const sums = readFileSync(join(DIR, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/) as [string, string]);
    expect(sums.map(([, name]) => name).sort()).toEqual(
      readdirSync(DIR)
        .filter((f) => f !== 'SHA256SUMS')
        .sort(),
    );
    for (const [sum, name] of sums)
      expect(
        `${name} ${createHash('sha256')
          .update(readFileSync(join(DIR, name)))
          .digest('hex')}`,
      ).toBe(`${name} ${sum}`);
  });

  it('names the image of this version in the components clusterctl installs', () => {
    expect(readFileSync(join(DIR, 'infrastructure-components.yaml'), 'utf8')).toContain(`image: ghcr.io/banlieue/banlieue:v${PACKAGE_VERSION}`);
  });

  it('ships the Grafana dashboard of this version', () => {
    expect(JSON.parse(readFileSync(join(DIR, 'banlieue-grafana-dashboard.json'), 'utf8'))).toEqual(grafanaDashboard(RELEASE_TAG));
  });
});
