// `banlieue validate` offline: the verdict the API server would give on a create.
import { describe, expect, it } from 'vitest';
import type { CelEngine } from '../../../../controller/cli/validate/cel-rules.js';
import { OfflineChecker } from '../../../../controller/cli/validate/offline-checker.js';
import { parseDocuments } from '../../../../controller/cli/validate/read-documents.js';

const CORE = 'banlieue.io/v1alpha1';
const checker = new OfflineChecker();
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const vm = (change: (o: Record<string, any>) => void = () => undefined): Record<string, unknown> => {
  const o = { apiVersion: CORE, kind: 'VirtualMachine', metadata: { name: 'web-1' }, spec: { classRef: { name: 'small' }, imageRef: { name: 'ubuntu' } } };
  change(o);
  return o;
};
const verdictOf = (object: unknown) => checker.check({ file: 'f.yaml', index: 0, object });

describe('banlieue validate offline', { timeout: 60_000 }, () => {
  it('accepts a valid VirtualMachine', () => {
    expect(verdictOf(vm())).toMatchObject({ ok: true, errors: [], kind: 'VirtualMachine', name: 'web-1' });
  });

  it.each([
    ['a typo in a field name', vm((o) => (o.spec.classRefs = { name: 'x' })), 'spec.classRefs', 'unknown field "spec.classRefs"'],
    ['an unknown field deep in the spec', vm((o) => (o.spec.classRef.nmae = 'x')), 'spec.classRef.nmae', 'unknown field'],
    ['an unknown metadata field', vm((o) => (o.metadata.nmae = 'x')), 'metadata.nmae', 'unknown field'],
    ['a misspelt kind', vm((o) => (o.kind = 'VirtualMashine')), 'kind', 'did you mean "VirtualMachine"?'],
    ['a version banlieue does not serve', vm((o) => (o.apiVersion = 'banlieue.io/v1beta1')), 'apiVersion', 'supported versions: "banlieue.io/v1alpha1"'],
    ['a misspelt group', vm((o) => (o.apiVersion = 'banlieu.io/v1alpha1')), 'apiVersion', 'did you mean "banlieue.io"?'],
    ['a kind of the other group', vm((o) => (o.apiVersion = 'infrastructure.banlieue.io/v1alpha1')), 'kind', 'no kind "VirtualMachine"'],
    ['an underscore in the name', vm((o) => (o.metadata.name = 'Web_1')), 'metadata.name', 'RFC 1123 subdomain'],
    ['no name', vm((o) => delete o.metadata.name), 'metadata.name', 'Required value'],
    ['a name over 253 characters', vm((o) => (o.metadata.name = 'a'.repeat(254))), 'metadata.name', 'no more than 253 characters'],
    ['a label value over 63 characters', vm((o) => (o.metadata.labels = { app: 'a'.repeat(100_000) })), 'metadata.labels', 'valid label'],
    ['a label key with a space', vm((o) => (o.metadata.labels = { 'a b': 'x' })), 'metadata.labels', 'name part'],
    ['a namespace that is no DNS label', vm((o) => (o.metadata.namespace = 'Team_A')), 'metadata.namespace', 'RFC 1123 label'],
    ['a wrong type', vm((o) => (o.spec.classRef.name = 7)), 'spec.classRef.name', 'must be string'],
    ['a missing required field', vm((o) => delete o.spec.classRef), 'spec.classRef', 'Required value'],
    ['a value outside an enum', vm((o) => (o.spec.desiredPowerState = 'On')), 'spec.desiredPowerState', 'Unsupported value'],
  ])('refuses %s, naming the field', (_, object, field, message) => {
    const verdict = verdictOf(object);
    expect(verdict?.ok).toBe(false);
    expect(verdict?.errors).toContainEqual({ field, message: expect.stringContaining(message) as string });
  });

  it('ignores a namespace on a cluster-scoped kind, as kubectl and the apiserver do (a namespaced cdk8s Chart sets one)', () => {
    const cls = { apiVersion: CORE, kind: 'VMImage', metadata: { name: 'img', namespace: 'vms' }, spec: {} };
    expect(verdictOf(cls)?.errors.filter((e) => e.field === 'metadata.namespace')).toEqual([]);
  });

  it('leaves objects of other API groups alone', () => {
    expect(verdictOf({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' } })).toBeUndefined();
    expect(verdictOf({ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', metadata: { name: 'c' } })).toBeUndefined();
  });

  it('refuses a document that is not YAML, naming its file and position', () => {
    const [doc] = parseDocuments('bad.yaml', 'kind: [unclosed\n');
    expect(doc && checker.check(doc)).toMatchObject({ file: 'bad.yaml', index: 0, ok: false });
  });

  it('never reports an applicable CEL rule as passed without a CEL engine', () => {
    const provider = {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'vc' },
      spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint: 'http://vc.example.com/sdk' } },
    };
    const verdict = verdictOf(provider);
    expect(verdict?.ok).toBe(true);
    expect(verdict?.notCheckedOffline.length).toBeGreaterThan(0);
    expect(verdict?.notCheckedOffline[0]?.message).toContain('not checked offline');
  });

  it('refuses an object whose CEL rule fails when an engine is given, naming the field and the rule message', () => {
    // A scripted engine: this test is about which rules reach it and how a failure reads, not CEL itself.
    const endpointMustBeHttps: CelEngine = { evaluate: (rule) => (rule.includes("startsWith('https://')") ? false : true) };
    const provider = {
      apiVersion: CORE,
      kind: 'Provider',
      metadata: { name: 'vc' },
      spec: { providerClassRef: { name: 'vsphere' }, connection: { endpoint: 'http://vc.example.com/sdk', credentialsRef: { name: 'c' } } },
    };
    const verdict = new OfflineChecker(undefined, endpointMustBeHttps).check({ file: '-', index: 0, object: provider });
    expect(verdict?.ok).toBe(false);
    expect(verdict?.errors).toContainEqual({ field: 'spec.connection.endpoint', message: expect.stringContaining('https://') as string });
  });

  it('skips transition rules (oldSelf): a create has no old object', () => {
    const seen: string[] = [];
    const recorder: CelEngine = { evaluate: (rule) => (seen.push(rule), true) };
    const template = {
      apiVersion: 'infrastructure.banlieue.io/v1alpha1',
      kind: 'VSphereMachineTemplate',
      metadata: { name: 'tpl' },
      spec: { template: { spec: { template: 'ubuntu', numCpus: 2, memoryMiB: 2048 } } },
    };
    new OfflineChecker(undefined, recorder).check({ file: '-', index: 0, object: template });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((r) => r.includes('oldSelf'))).toEqual([]);
  });
});

describe('banlieue validate offline, defaults', () => {
  it('accepts a missing required field that has a default, as the API server fills it in first', () => {
    const image = {
      apiVersion: CORE,
      kind: 'VMImage',
      metadata: { name: 'img' },
      spec: { osFamily: 'linux', osDistribution: 'ubuntu', osVersion: '24.04', sources: [{ providerClass: 'vsphere', kind: 'Template', ref: 'ubuntu-24.04' }] },
    };
    const verdict = verdictOf(image);
    expect(verdict?.errors).toEqual([]);
    expect(image.spec, 'the object read is left as it was').not.toHaveProperty('architecture');
  });
});
