// Names and domains that reach a guest: the schema holds them to DNS and
// interface-name grammars, checked here by the same schema the CRDs carry.
import { describe, expect, it } from 'vitest';
import { BanlieueValidator } from '../../../infra/api/validator.js';

const validator = new BanlieueValidator();

const vmClass = (iface: Record<string, unknown>): unknown => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VMClass',
  metadata: { name: 'cls' },
  spec: {
    hardware: { cpus: 2, memoryMiB: 2048, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] },
    network: { interfaces: [{ name: 'eth0', networkClass: 'lan', ...iface }] },
  },
});

const vm = (override: Record<string, unknown>): unknown => ({
  apiVersion: 'banlieue.io/v1alpha1',
  kind: 'VirtualMachine',
  metadata: { name: 'vm', namespace: 'ns' },
  spec: {
    classRef: { name: 'cls' },
    imageRef: { name: 'img' },
    networkOverrides: [{ name: 'eth0', static: { address: '192.0.2.5', prefix: 24 }, ...override }],
  },
});

const vsphereMachine = (domain: string): unknown => ({
  apiVersion: 'infrastructure.banlieue.io/v1alpha1',
  kind: 'VSphereMachine',
  metadata: { name: 'vsm', namespace: 'ns' },
  spec: {
    template: 'ubuntu',
    numCpus: 2,
    memoryMiB: 2048,
    network: [{ name: 'eth0', portGroup: 'vm', ipam: { static: { address: '192.0.2.5', prefix: 24, domain } } }],
  },
});

const fields = (obj: unknown): string[] => validator.validate(obj).map((issue) => issue.field);

const BAD_DOMAINS: [string, string][] = [
  ['a newline and a key', 'lab.example\nruncmd: [reboot]'],
  ['a command substitution', '$(reboot)'],
  ['": "', 'lab.example: x'],
  ['"#"', 'lab.example #x'],
  ['upper case', 'Lab.Example'],
  ['a trailing dot', 'lab.example.'],
  ['an empty label', 'lab..example'],
  ['a leading hyphen', '-lab.example'],
  ['254 characters', `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`],
];

const BAD_INTERFACE_NAMES: [string, string][] = [
  ['a newline and a key', 'eth0\nset-name: x'],
  ['a command substitution', '$(reboot)'],
  ['a slash', 'eth/0'],
  ['a space', 'eth 0'],
  ['a colon', 'eth0:1'],
  ['a leading dot', '.eth0'],
  ['16 characters', 'a234567890123456'],
];

describe('names that reach a guest', () => {
  it.each([['lab'], ['lab.example.com'], ['a-1.b-2.example']])('accepts the domain %j', (domain) => {
    expect(validator.validate(vm({ static: { address: '192.0.2.5', prefix: 24, domain } }))).toEqual([]);
    expect(validator.validate(vmClass({ ipam: { mode: 'static', domain } }))).toEqual([]);
    expect(validator.validate(vsphereMachine(domain))).toEqual([]);
  });

  it.each(BAD_DOMAINS)('refuses a VirtualMachine static domain with %s', (_what, domain) => {
    expect(fields(vm({ static: { address: '192.0.2.5', prefix: 24, domain } }))).toContain('spec.networkOverrides[0].static.domain');
  });

  it.each(BAD_DOMAINS)('refuses a VMClass interface domain with %s', (_what, domain) => {
    expect(fields(vmClass({ ipam: { mode: 'static', domain } }))).toContain('spec.network.interfaces[0].ipam.domain');
  });

  it.each(BAD_DOMAINS)('refuses an infrastructure machine static domain with %s', (_what, domain) => {
    expect(fields(vsphereMachine(domain))).toContain('spec.network[0].ipam.static.domain');
  });

  it.each([['eth0'], ['ens192'], ['eth0.100'], ['bond_0-a'], ['a23456789012345']])('accepts the interface name %j', (name) => {
    expect(validator.validate(vmClass({ name }))).toEqual([]);
    expect(validator.validate(vm({ name }))).toEqual([]);
  });

  it.each(BAD_INTERFACE_NAMES)('refuses a VMClass interface name with %s', (_what, name) => {
    expect(fields(vmClass({ name }))).toContain('spec.network.interfaces[0].name');
  });

  it.each(BAD_INTERFACE_NAMES)('refuses a VirtualMachine override interface name with %s', (_what, name) => {
    expect(fields(vm({ name }))).toContain('spec.networkOverrides[0].name');
  });
});
