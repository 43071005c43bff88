// What an `npm install banlieue` user gets: the packed tarball installed into a
// throwaway cdk8s app that synthesises the install plus a Provider and a VM.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BanlieueValidator } from '../../infra/api/validator.js';

const root = process.cwd();
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  version: string;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

// A user's app as its author writes it: typed constructs, Props values,
// references between objects, type-checked before it runs.
const CONSUMER = `
import { App, Chart } from 'cdk8s';
import { BanlieueInstall, Provider, VirtualMachine, VMClass, VMImage, type ProviderProps, type VirtualMachineProps, type VMClassReference } from 'banlieue';

const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'site', { namespace: 'vms' });
new BanlieueInstall(chart, 'banlieue', { namespace: 'virt', registry: 'registry.example.com/mirror', version: 'v1.2.3', backends: ['vsphere'], admissionPolicies: true, networkPolicies: true });
const vcenter: ProviderProps = {
  metadata: { name: 'vcenter-a', namespace: 'vms' },
  providerClassRef: { name: 'vsphere' },
  connection: { endpoint: 'https://vcenter-a.example.com/sdk', credentialsRef: { name: 'vcenter-a' } },
  capabilities: { storageClasses: [{ name: 'fast', target: { datastore: 'ds-ssd' } }], networkClasses: [{ name: 'lan', target: { portGroup: 'VM Network' } }] },
};
new Provider(chart, 'vcenter', vcenter);
const small: VMClassReference = new VMClass(chart, 'small', {
  metadata: { name: 'small' },
  hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 40, storageClass: 'fast' }] },
  network: { interfaces: [{ name: 'eth0', networkClass: 'lan' }] },
});
const ubuntu = new VMImage(chart, 'ubuntu', {
  metadata: { name: 'ubuntu-24-04' },
  osFamily: 'linux', osDistribution: 'ubuntu', osVersion: '24.04', architecture: 'amd64',
  sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu-24.04' }],
});
const web: VirtualMachineProps = { metadata: { name: 'web-1', namespace: 'vms' }, vmClass: small, image: ubuntu, desiredPowerState: 'PoweredOn' };
let vm: VirtualMachine = new VirtualMachine(chart, 'web', web);
vm = new VirtualMachine(chart, 'db', { metadata: { name: 'db-1' }, vmClass: VMClass.fromName('large'), image: VMImage.fromName('ubuntu-24-04') });
console.log(vm.name);
app.synth();
`;

// Type-checked only: what the compiler must refuse.
const WRONG_KIND = `
import { App, Chart } from 'cdk8s';
import { VirtualMachine, VMImage } from 'banlieue';
const chart = new Chart(new App(), 'wrong');
const image = VMImage.fromName('ubuntu-24-04');
// @ts-expect-error an image is no class
new VirtualMachine(chart, 'wrong', { metadata: { name: 'wrong' }, vmClass: image, image });
// @ts-expect-error the class is a reference, not the wire {name}
new VirtualMachine(chart, 'raw', { metadata: { name: 'raw' }, vmClass: { name: 'small' }, image });
`;

const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, types: ['node'] },
  files: ['main.ts', 'wrong-kind.ts'],
};

const BROKEN = `
import { App, Chart } from 'cdk8s';
import { VirtualMachine, VMClass, VMImage } from 'banlieue';
const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'broken');
new VirtualMachine(chart, 'bad', { metadata: { name: 'bad', namespace: 'vms' }, vmClass: VMClass.fromName('small'), image: VMImage.fromName('x'), migrationPolicy: 'sometimes' });
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
        // The peers at the versions banlieue is built and tested with.
        dependencies: {
          banlieue: `file:${join(work, packed)}`,
          cdk8s: pkg.devDependencies.cdk8s,
          constructs: pkg.devDependencies.constructs,
        },
        devDependencies: { '@types/node': pkg.devDependencies['@types/node'] },
      }),
    );
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    writeFileSync(join(consumer, 'main.ts'), CONSUMER);
    writeFileSync(join(consumer, 'wrong-kind.ts'), WRONG_KIND);
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

  it('takes cdk8s and constructs as peers: the app has one copy of each, its own', () => {
    expect(pkg.peerDependencies).toEqual({ cdk8s: expect.any(String), constructs: expect.any(String) });
    const shipped = JSON.parse(readFileSync(join(consumer, 'node_modules/banlieue/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(shipped.dependencies)).not.toContain('cdk8s');
    expect(Object.keys(shipped.dependencies)).not.toContain('constructs');
    // Every installed copy: a package.json in a node_modules/<name> folder at any depth.
    const installed = readdirSync(join(consumer, 'node_modules'), { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('package.json'));
    const copies = (name: string): string[] =>
      installed
        .filter((p) => p === `${name}/package.json` || p.endsWith(`/node_modules/${name}/package.json`))
        .map((p) => join(consumer, 'node_modules', p, '..'));
    expect(copies('cdk8s')).toEqual([join(consumer, 'node_modules/cdk8s')]);
    expect(copies('constructs')).toEqual([join(consumer, 'node_modules/constructs')]);
  });

  it('type-checks an app that declares its objects with the construct classes and their Props types, and refuses a wrong reference', () => {
    const result = spawnSync(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: consumer, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('synthesises an install, a Provider, a VMClass, a VMImage and VirtualMachines that validate', () => {
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
    expect(banlieueDocs.map((d) => d.kind).sort()).toEqual(['Provider', 'VMClass', 'VMImage', 'VirtualMachine', 'VirtualMachine']);
    const vms = banlieueDocs.filter((d) => d.kind === 'VirtualMachine') as unknown as { metadata: { name: string }; spec: Record<string, unknown> }[];
    expect(vms.map((d) => [d.metadata.name, d.spec.classRef, d.spec.imageRef])).toEqual([
      ['web-1', { name: 'small' }, { name: 'ubuntu-24-04' }],
      ['db-1', { name: 'large' }, { name: 'ubuntu-24-04' }],
    ]);
    // The cluster-scoped kinds carry no namespace, though their Chart has one.
    expect(banlieueDocs.filter((d) => d.kind.startsWith('VM')).map((d) => d.metadata.namespace)).toEqual([undefined, undefined]);
    for (const doc of banlieueDocs) expect(validator.validate(doc), `${doc.kind} ${doc.metadata.name}`).toEqual([]);
    // The CLI installed with the package validates them too.
    const cli = execFileSync(join(consumer, 'node_modules/.bin/banlieue'), ['validate', ...readdirSync(out).map((f) => join(out, f))], {
      encoding: 'utf8',
    });
    expect(cli).toContain('5 objects valid');
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
