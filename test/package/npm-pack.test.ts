// What an `npm install banlieue` user gets: the packed tarball installed into a
// throwaway cdk8s app that synthesises the install plus a Provider and a VM.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BanlieueValidator } from '../../infra/api/validator.js';

const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; dependencies: Record<string, string> };

const CONSUMER = `
import { App, Chart } from 'cdk8s';
import { BanlieueInstall, Provider, VirtualMachine, VMClass, VMImage } from 'banlieue';

const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'site', { namespace: 'vms' });
new BanlieueInstall(chart, 'banlieue', { namespace: 'virt', registry: 'registry.example.com/mirror', version: 'v1.2.3', backends: ['vsphere'], admissionPolicies: true, networkPolicies: true });
new Provider(chart, 'vcenter', {
  metadata: { name: 'vcenter-a', namespace: 'vms' },
  spec: {
    providerClassRef: { name: 'vsphere' },
    connection: { endpoint: 'https://vcenter-a.example.com/sdk', credentialsRef: { name: 'vcenter-a' } },
    capabilities: { storageClasses: [{ name: 'fast', target: { datastore: 'ds-ssd' } }], networkClasses: [{ name: 'lan', target: { portGroup: 'VM Network' } }] },
  },
});
new VMClass(chart, 'small', {
  metadata: { name: 'small' },
  spec: { hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 40, storageClass: 'fast' }] }, network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] } },
});
new VMImage(chart, 'ubuntu', {
  metadata: { name: 'ubuntu-24-04' },
  spec: { osFamily: 'linux', osDistribution: 'ubuntu', osVersion: '24.04', architecture: 'amd64', sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu-24.04' }] },
});
new VirtualMachine(chart, 'web', {
  metadata: { name: 'web-1', namespace: 'vms' },
  spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu-24-04' }, desiredPowerState: 'PoweredOn' },
});
app.synth();
`;

const BROKEN = `
import { App, Chart } from 'cdk8s';
import { VirtualMachine } from 'banlieue';
const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'broken');
new VirtualMachine(chart, 'bad', { metadata: { name: 'bad', namespace: 'vms' }, spec: { classRef: { name: 'small' }, imageRef: { name: 'x' }, migrationPolicy: 'sometimes' } });
app.synth();
`;

describe('the npm package', () => {
  let work: string;
  let consumer: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'banlieue-pack-'));
    const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { encoding: 'utf8' }).trim().split('\n').pop() ?? '';
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    writeFileSync(
      join(consumer, 'package.json'),
      JSON.stringify({
        name: 'banlieue-consumer',
        private: true,
        type: 'module',
        dependencies: {
          banlieue: `file:${join(work, packed)}`,
          cdk8s: pkg.dependencies.cdk8s,
          constructs: pkg.dependencies.constructs,
        },
      }),
    );
    writeFileSync(join(consumer, 'main.ts'), CONSUMER);
    writeFileSync(join(consumer, 'broken.ts'), BROKEN);
    execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: consumer, stdio: 'pipe' });
  });

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('ships the compiled library, the CLI and dist/, but no tests or sources', () => {
    const listed = readdirSync(join(consumer, 'node_modules/banlieue'));
    expect(listed).toEqual(expect.arrayContaining(['lib', 'bin', 'dist', 'package.json', 'LICENSE', 'README.md']));
    expect(listed).not.toContain('test');
    expect(listed).not.toContain('controller');
  });

  it('synthesises an install, a Provider and a VirtualMachine that validate', () => {
    const out = join(work, 'out');
    execFileSync(join(root, 'node_modules/.bin/tsx'), ['main.ts', out], { cwd: consumer, stdio: 'pipe' });
    const docs = readdirSync(out).flatMap((f) =>
      parseAllDocuments(readFileSync(join(out, f), 'utf8')).map(
        (d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } },
      ),
    );
    const kinds = new Set(docs.map((d) => d.kind));
    for (const kind of [
      'CustomResourceDefinition',
      'Deployment',
      'ClusterRole',
      'Provider',
      'VirtualMachine',
      'VMClass',
      'VMImage',
      'ValidatingAdmissionPolicy',
      'NetworkPolicy',
    ]) {
      expect(kinds, kind).toContain(kind);
    }
    const deployment = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 'banlieue-controller') as unknown as {
      metadata: { namespace: string };
      spec: { template: { spec: { containers: { image: string }[] } } };
    };
    expect(deployment.metadata.namespace).toBe('virt');
    expect(deployment.spec.template.spec.containers[0]?.image).toBe('registry.example.com/mirror/banlieue:v1.2.3');
    expect(docs.find((d) => d.kind === 'ClusterRole')?.metadata.namespace).toBeUndefined();
    const validator = new BanlieueValidator();
    const banlieueDocs = docs.filter((d) => validator.handles(d.apiVersion, d.kind));
    expect(banlieueDocs.map((d) => d.kind).sort()).toEqual(['Provider', 'VMClass', 'VMImage', 'VirtualMachine']);
    for (const doc of banlieueDocs) expect(validator.validate(doc), `${doc.kind} ${doc.metadata.name}`).toEqual([]);
    // The CLI installed with the package validates them too.
    const cli = execFileSync(join(consumer, 'node_modules/.bin/banlieue'), ['validate', ...readdirSync(out).map((f) => join(out, f))], {
      encoding: 'utf8',
    });
    expect(cli).toContain('4 objects valid');
  });

  it('fails synthesis of an invalid VirtualMachine naming the field', () => {
    let message = '';
    try {
      execFileSync(join(root, 'node_modules/.bin/tsx'), ['broken.ts', join(work, 'broken-out')], { cwd: consumer, stdio: 'pipe' });
    } catch (err) {
      message = String((err as { stderr?: Buffer }).stderr);
    }
    expect(message).toContain('VirtualMachine bad: spec.migrationPolicy: Unsupported value');
  });
});
