// Where a VM runs, read from the infrastructure machine it controls, and the
// record (`status.scheduled`) kept in step with it (issue 10, Build 7).
import { describe, expect, it } from 'vitest';
import { BACKENDS, type Backend } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import type { ScheduledPlacement } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { buildInfraMachine, type InfraBuildInput, type InfraMachineObject } from '../../../../controller/reconcilers/virtual-machine/infra-builders.js';
import {
  readResolvedClasses,
  recordAgrees,
  recordRunning,
  runningPlacement,
  toScheduledPlacement,
  type Placement,
  type RunningPlacement,
} from '../../../../controller/reconcilers/virtual-machine/placement.js';
import { aClass, aPlacement, aVm, anImage } from './fixtures.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const MADE = new Date('2026-02-01T08:00:00Z');
const oneDiskClass = aClass({ hardware: { cpus: 2, memoryMiB: 4096, disks: [{ name: 'os', sizeGiB: 20, storageClass: 'fast' }] } });

function input(placement: Placement, change: Partial<InfraBuildInput> = {}): InfraBuildInput {
  return { vm: aVm(), vmClass: oneDiskClass, image: anImage(), placement, ...change };
}

/** The machine the controller built at `placement`. */
function machineAt(placement: Placement, change: Partial<InfraBuildInput> = {}): InfraMachineObject {
  const built = buildInfraMachine(input(placement, change), BUILT_IN_BACKENDS);
  if (!built.ok) throw new Error(built.message);
  return built.object;
}

/** `placement` with every storage target replaced by `storage` and every network target by `network`. */
function retargeted(placement: Placement, storage: string, network: string): Placement {
  return {
    ...placement,
    resolvedStorage: placement.resolvedStorage.map((r) => ({ ...r, backendId: storage })),
    resolvedNetworks: placement.resolvedNetworks.map((r) => ({ ...r, backendId: network })),
  };
}

describe('where a VM runs', () => {
  it.each(BACKENDS)('reads backend, Provider and failure domain from the %s machine', (backend) => {
    const placement = aPlacement(backend, { disks: 1 });
    expect(runningPlacement(machineAt(placement), BUILT_IN_BACKENDS)).toEqual({ providerClass: backend, providerName: `${backend}-a`, failureDomain: 'fd-1' });
  });

  it('reads a Provider or failure domain another writer removed as empty, so that it matches no placement', () => {
    const machine = machineAt(aPlacement('vsphere', { disks: 1 }));
    const stripped = { ...machine, spec: { ...machine.spec, providerRef: undefined, failureDomain: undefined } } as InfraMachineObject;
    expect(runningPlacement(stripped, BUILT_IN_BACKENDS)).toEqual({ providerClass: 'vsphere', providerName: '', failureDomain: '' });
  });

  it.each<Backend>(['vsphere', 'proxmox', 'libvirt'])('reads back the class targets the %s machine carries, not the fresh ones', (backend) => {
    const built = aPlacement(backend, { disks: 1 });
    const machine = machineAt(built);
    expect(readResolvedClasses(machine, input(built), BUILT_IN_BACKENDS)).toEqual({ resolvedStorage: built.resolvedStorage, resolvedNetworks: built.resolvedNetworks });
    // The Provider now maps the classes elsewhere: the machine still carries what it was built with.
    const fresh = retargeted(built, 'store-new', 'net-new');
    expect(readResolvedClasses(machine, input(fresh), BUILT_IN_BACKENDS)).toEqual({ resolvedStorage: built.resolvedStorage, resolvedNetworks: built.resolvedNetworks });
  });

  it('reads back one target per disk when the disks resolve apart (Proxmox data disks)', () => {
    const built: Placement = {
      ...aPlacement('proxmox'),
      resolvedStorage: [
        { className: 'fast', backendId: 'ceph' },
        { className: 'fast', backendId: 'local-lvm' },
      ],
    };
    const machine = machineAt(built, { vmClass: aClass() });
    const fresh = retargeted(built, 'ceph', 'vmbr0');
    expect(readResolvedClasses(machine, input(fresh, { vmClass: aClass() }), BUILT_IN_BACKENDS).resolvedStorage).toEqual(built.resolvedStorage);
  });

  it('reads no targets from a Cloud Hypervisor machine: it names classes and its host resolves them', () => {
    const built = aPlacement('cloud-hypervisor', { disks: 1 });
    expect(readResolvedClasses(machineAt(built), input(retargeted(built, 'x', 'y')), BUILT_IN_BACKENDS)).toEqual({});
  });

  it.each<[string, (spec: Record<string, unknown>) => Record<string, unknown>, 'resolvedStorage' | 'resolvedNetworks']>([
    ['the datastore was removed', ({ datastore: _, ...rest }) => rest, 'resolvedStorage'],
    ['the NIC list is empty', (spec) => ({ ...spec, network: [] }), 'resolvedNetworks'],
  ])('leaves a list unread when %s', (_, change, unread) => {
    const built = aPlacement('vsphere', { disks: 1 });
    const machine = machineAt(built);
    const read = readResolvedClasses({ ...machine, spec: change(machine.spec as Record<string, unknown>) } as InfraMachineObject, input(built), BUILT_IN_BACKENDS);
    expect(read[unread]).toBeUndefined();
  });

  it('reads nothing when the machine cannot be built at the fresh placement', () => {
    const built = aPlacement('vsphere', { disks: 1 });
    expect(readResolvedClasses(machineAt(built), input({ ...built, failureDomain: { name: 'fd-1', attributes: { raw: {} } } }), BUILT_IN_BACKENDS)).toEqual({});
  });
});

describe('the record of where a VM runs', () => {
  const placed = aPlacement('vsphere');
  const running: RunningPlacement = {
    providerClass: 'vsphere',
    providerName: 'vsphere-a',
    failureDomain: 'fd-1',
    resolvedStorage: placed.resolvedStorage,
    resolvedNetworks: placed.resolvedNetworks,
  };
  const record = toScheduledPlacement(placed, MADE);

  it.each<[string, ScheduledPlacement | undefined, boolean]>([
    ['says what the machine says', record, true],
    ['says so with keys in another order (as the API server returns them)', { scheduledAt: record.scheduledAt, failureDomain: 'fd-1', providerName: 'vsphere-a', providerClass: 'vsphere', resolvedNetworks: record.resolvedNetworks, resolvedStorage: record.resolvedStorage }, true],
    ['names another Provider', { ...record, providerName: 'vsphere-b' }, false],
    ['names another backend', { ...record, providerClass: 'proxmox' }, false],
    ['names another failure domain', { ...record, failureDomain: 'fd-2' }, false],
    ['names another storage target', { ...record, resolvedStorage: [{ className: 'fast', backendId: 'ds-other' }, { className: 'fast', backendId: 'ds-ssd' }] }, false],
    ['names another network target', { ...record, resolvedNetworks: [{ className: 'prod', backendId: 'pg-other' }] }, false],
    ['is unset', undefined, false],
  ])('judges a record that %s', (_, recorded, agrees) => {
    expect(recordAgrees(recorded, running)).toBe(agrees);
  });

  it('keeps a record that agrees as it is, scheduling time included', () => {
    expect(recordRunning(record, running, NOW)).toBe(record);
  });

  it('rewrites a record that disagrees from the machine, dated when the machine was made', () => {
    expect(recordRunning({ ...record, providerName: 'vsphere-b', failureDomain: 'fd-9', scheduledAt: '2030-01-01T00:00:00Z' }, running, MADE)).toEqual(record);
    expect(recordRunning(undefined, running, MADE)).toEqual(record);
  });

  it('keeps the lists a machine does not carry only from a record of the same Provider and failure domain', () => {
    const bare: RunningPlacement = { providerClass: 'vsphere', providerName: 'vsphere-a', failureDomain: 'fd-1' };
    expect(recordRunning(record, bare, NOW)).toBe(record);
    expect(recordRunning({ ...record, failureDomain: 'fd-2' }, bare, MADE)).toEqual({ providerClass: 'vsphere', providerName: 'vsphere-a', failureDomain: 'fd-1', scheduledAt: record.scheduledAt });
  });
});
