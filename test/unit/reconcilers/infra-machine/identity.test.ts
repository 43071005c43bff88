// machineIdentity: the UUID a machine's VM is created with, and the providerID
// carrying it (docs/adr/0005-vm-identity-in-spec.md).
import { describe, expect, it } from 'vitest';
import { type BackendName } from '../../../../infra/api/backends.js';
import { machineIdentity as machineIdentityForScheme, type IdentitySource } from '../../../../controller/reconcilers/infra-machine/identity.js';
import { backendApi } from '../../../../infra/api/backends.js';
import { machineUuid, providerIdFor as providerIdForScheme } from '../../../../controller/reconcilers/machine-identity.js';
import { withOverrides, type Overrides } from '../../../support/overrides.js';

const VM_UID = '0f8b5a4e-7f3c-4d2e-9a61-3c2b1d0e9f87';
const MACHINE_UID = '6d1c3f0a-2b4e-4c8d-9e7f-1a2b3c4d5e6f';
const UUID = '4213c4a2-0f3e-5b6d-8a9c-1d2e3f4a5b6c';

type OwnerReference = NonNullable<IdentitySource['metadata']['ownerReferences']>[number];

const vmOwner = (change: Overrides<OwnerReference> = {}): OwnerReference =>
  withOverrides({ apiVersion: 'banlieue.io/v1alpha1', kind: 'VirtualMachine', uid: VM_UID, controller: true }, change);

const capiOwner: OwnerReference = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', uid: 'capi-machine-uid', controller: true };

function machine(opts: { providerID?: string; uid?: string | null; owners?: OwnerReference[] } = {}): IdentitySource {
  return {
    metadata: {
      ...(opts.uid === null ? {} : { uid: opts.uid ?? MACHINE_UID }),
      ...(opts.owners ? { ownerReferences: opts.owners } : {}),
    },
    spec: opts.providerID !== undefined ? { providerID: opts.providerID } : {},
  };
}

describe('InfraMachine identity', () => {
  describe('from spec.providerID', () => {
    it('takes the UUID from spec.providerID, already written', () => {
      expect(machineIdentity('vsphere', machine({ providerID: `vsphere://${UUID}`, owners: [vmOwner()] }))).toEqual({
        ok: true,
        uuid: UUID,
        providerID: `vsphere://${UUID}`,
        unwritten: false,
        derived: false,
      });
    });

    it('says a providerID is derived when it is the one the machine’s owner gives (adopt or create)', () => {
      const derived = providerIdFor('vsphere', VM_UID);
      expect(machineIdentity('vsphere', machine({ providerID: derived, owners: [vmOwner()] }))).toMatchObject({ ok: true, derived: true });
    });

    it('says a providerID is not derived after a move or a hand edit (adopt a marked VM only, never create)', () => {
      expect(machineIdentity('vsphere', machine({ providerID: providerIdFor('vsphere', 'old-cluster-uid'), owners: [vmOwner()] }))).toMatchObject({
        ok: true,
        derived: false,
      });
    });

    it('lower-cases the UUID and keeps spec.providerID as written', () => {
      const written = `vsphere://${UUID.toUpperCase()}`;
      expect(machineIdentity('vsphere', machine({ providerID: written }))).toEqual({
        ok: true,
        uuid: UUID,
        providerID: written,
        unwritten: false,
        derived: false,
      });
    });

    it('wins over the owner VirtualMachine uid and the machine uid (it survives clusterctl move)', () => {
      const identity = machineIdentity('libvirt', machine({ providerID: `libvirt://${UUID}`, owners: [vmOwner()] }));
      expect(identity).toMatchObject({ ok: true, uuid: UUID });
      expect(identity).not.toMatchObject({ uuid: machineUuid(VM_UID) });
    });

    it.each([
      ['proxmox', 'proxmox'],
      ['libvirt', 'libvirt'],
      ['cloud-hypervisor', 'cloudhypervisor'],
    ] as const)('parses a %s providerID with the %s:// scheme', (backend, scheme) => {
      expect(machineIdentity(backend, machine({ providerID: `${scheme}://${UUID}` }))).toMatchObject({ ok: true, uuid: UUID });
    });

    it.each([
      ['another backend’s scheme', 'vsphere', `libvirt://${UUID}`],
      ['a scheme without //', 'vsphere', `vsphere:${UUID}`],
      ['the cloud-hypervisor backend name as scheme', 'cloud-hypervisor', `cloud-hypervisor://${UUID}`],
      ['no scheme', 'vsphere', UUID],
      ['a VM name, not a UUID', 'vsphere', 'vsphere://web-1'],
      ['a UUID without dashes', 'vsphere', `vsphere://${UUID.replace(/-/g, '')}`],
      ['a UUID with trailing text', 'vsphere', `vsphere://${UUID}/x`],
      ['an empty string', 'vsphere', ''],
    ] as const)('refuses %s, naming spec.providerID and the expected shape', (_what, backend: BackendName, providerID) => {
      const identity = machineIdentity(backend, machine({ providerID, owners: [vmOwner()] }));
      expect(identity.ok).toBe(false);
      if (identity.ok) return;
      expect(identity.message).toContain('spec.providerID');
      expect(identity.message).toContain(`"${providerID}"`);
      expect(identity.message).toContain(`${schemeOf(backend)}://<UUID>`);
    });
  });

  describe('without spec.providerID', () => {
    it('derives the UUID from the controller owner VirtualMachine uid, as the controller renders ${PROVIDER_ID}', () => {
      const identity = machineIdentity('vsphere', machine({ owners: [capiOwner, vmOwner()] }));
      expect(identity).toEqual({ ok: true, uuid: machineUuid(VM_UID), providerID: providerIdFor('vsphere', VM_UID), unwritten: true, derived: true });
    });

    it.each(['vsphere', 'proxmox', 'libvirt', 'cloud-hypervisor'] as const)('gives the %s providerID the controller offers the guest', (backend) => {
      expect(machineIdentity(backend, machine({ owners: [vmOwner()] }))).toMatchObject({ providerID: providerIdFor(backend, VM_UID) });
    });

    it('derives the UUID from the machine’s own uid when CAPI owns it', () => {
      expect(machineIdentity('vsphere', machine({ owners: [capiOwner] }))).toEqual({
        ok: true,
        uuid: machineUuid(MACHINE_UID),
        providerID: providerIdFor('vsphere', MACHINE_UID),
        unwritten: true,
        derived: true,
      });
    });

    it('derives the UUID from the machine’s own uid when it has no owner', () => {
      expect(machineIdentity('proxmox', machine())).toMatchObject({ ok: true, uuid: machineUuid(MACHINE_UID), unwritten: true });
    });

    it.each([
      ['not the controller', vmOwner({ controller: false })],
      ['with no controller flag', vmOwner({ controller: undefined })],
      ['of another API group', vmOwner({ apiVersion: 'example.com/v1' })],
      ['of a group that only starts like banlieue.io', vmOwner({ apiVersion: 'banlieue.io.example.com/v1' })],
    ])('ignores a VirtualMachine owner %s', (_what, owner) => {
      expect(machineIdentity('vsphere', machine({ owners: [owner] }))).toMatchObject({ ok: true, uuid: machineUuid(MACHINE_UID) });
    });

    it('uses the owner VirtualMachine uid even before the machine has its own', () => {
      expect(machineIdentity('vsphere', machine({ uid: null, owners: [vmOwner()] }))).toMatchObject({ ok: true, uuid: machineUuid(VM_UID) });
    });

    it('refuses a machine with no uid and no owner VirtualMachine', () => {
      expect(machineIdentity('vsphere', machine({ uid: null }))).toEqual({ ok: false, message: 'the machine has no metadata.uid' });
    });

    it('round-trips: the providerID it derives is accepted back as spec.providerID with the same UUID', () => {
      const first = machineIdentity('cloud-hypervisor', machine({ owners: [vmOwner()] }));
      if (!first.ok) throw new Error(first.message);
      expect(machineIdentity('cloud-hypervisor', machine({ providerID: first.providerID, owners: [vmOwner()] }))).toEqual({ ...first, unwritten: false });
    });
  });
});

function schemeOf(backend: string): string {
  const api = backendApi(backend);
  if (!api) throw new Error(`no backend ${backend}`);
  return api.providerIDScheme;
}

function machineIdentity(backend: string, source: Parameters<typeof machineIdentityForScheme>[1]): ReturnType<typeof machineIdentityForScheme> {
  return machineIdentityForScheme(schemeOf(backend), source);
}

function providerIdFor(backend: string, uid: string): string {
  return providerIdForScheme(schemeOf(backend), uid);
}
