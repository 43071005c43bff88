import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BACKENDS, backendApi } from '../../../../infra/api/backends.js';
import { MACHINE_UUID_NAMESPACE, machineUuid, providerIdFor, uuidV5 } from '../../../../controller/reconcilers/machine-identity.js';
import { VM_UID } from './fixtures.js';

const DNS_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';
const V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A second, string-based RFC 4122 v5, written apart from the module under test. */
function referenceUuidV5(namespace: string, name: string): string {
  const nsBytes = Buffer.from(namespace.split('-').join(''), 'hex');
  const hex = createHash('sha1')
    .update(Buffer.concat([nsBytes, Buffer.from(name, 'utf8')]))
    .digest('hex')
    .slice(0, 32);
  const version = (parseInt(hex.slice(12, 14), 16) & 0x0f) | 0x50;
  const variant = (parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80;
  const out = hex.slice(0, 12) + version.toString(16).padStart(2, '0') + hex.slice(14, 16) + variant.toString(16) + hex.slice(18);
  return [out.slice(0, 8), out.slice(8, 12), out.slice(12, 16), out.slice(16, 20), out.slice(20)].join('-');
}

describe('machine identity', () => {
  it.each([
    // Python documentation example: uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org').
    ['python.org', DNS_NAMESPACE, '886313e1-3b8a-5372-9b90-0c9aee199e5d'],
    // The documented derivation of the banlieue namespace.
    ['banlieue.io', DNS_NAMESPACE, MACHINE_UUID_NAMESPACE],
  ])('derives the published v5 UUID of %s', (name, namespace, expected) => {
    expect(uuidV5(namespace, name)).toBe(expected);
    expect(referenceUuidV5(namespace, name)).toBe(expected);
  });

  it('derives the machine UUID of a VM uid in the banlieue namespace (vector from Python uuid.uuid5)', () => {
    expect(machineUuid(VM_UID)).toBe('74e4d702-bafd-5e07-8195-ab7a57a18b2a');
  });

  it.each(['0f8b5a4e-7f3c-4d2e-9a61-3c2b1d0e9f87', 'a', '', 'ünïcödé-uid'])(
    'is a deterministic RFC 4122 version 5 UUID for uid %j, matching an independent implementation',
    (uid) => {
      const uuid = machineUuid(uid);
      expect(uuid).toMatch(V5);
      expect(machineUuid(uid)).toBe(uuid);
      expect(uuid).toBe(referenceUuidV5(MACHINE_UUID_NAMESPACE, uid));
    },
  );

  it('gives different VMs different UUIDs', () => {
    expect(machineUuid('uid-1')).not.toBe(machineUuid('uid-2'));
  });

  it.each([
    ['vsphere', 'vsphere://74e4d702-bafd-5e07-8195-ab7a57a18b2a'],
    ['proxmox', 'proxmox://74e4d702-bafd-5e07-8195-ab7a57a18b2a'],
    ['libvirt', 'libvirt://74e4d702-bafd-5e07-8195-ab7a57a18b2a'],
    ['cloud-hypervisor', 'cloudhypervisor://74e4d702-bafd-5e07-8195-ab7a57a18b2a'],
  ] as const)('writes the %s providerID with its peer scheme', (backend, expected) => {
    expect(providerIdFor(backendApi(backend)?.providerIDScheme ?? '', VM_UID)).toBe(expected);
  });

  it('covers every backend', () => {
    expect(BACKENDS.map((b) => providerIdFor(backendApi(b)?.providerIDScheme ?? '', VM_UID).split('://')[1])).toEqual(BACKENDS.map(() => machineUuid(VM_UID)));
  });

  it('refuses a namespace that is not a UUID', () => {
    expect(() => uuidV5('not-a-uuid', 'x')).toThrow('namespace "not-a-uuid" is not a UUID');
  });
});
