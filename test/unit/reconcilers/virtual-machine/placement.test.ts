// Where a VM runs, read from the infrastructure machine it controls; the
// placement its machine is rebuilt with; and the record (`status.scheduled`)
// kept in step with it.
import { describe, expect, it } from 'vitest';
import { type Provider } from '../../../../infra/api/banlieue.io/v1alpha1/provider.js';
import { BACKENDS, type BackendName } from '../../../../infra/api/backends.js';
import type { ScheduledPlacement } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { BUILT_IN_BACKENDS } from '../../../../controller/backends/registry.js';
import { resolveImageRef } from '../../../../controller/reconcilers/virtual-machine/build-context.js';
import { buildInfraMachine, type InfraBuildInput } from '../../../../controller/reconcilers/virtual-machine/infra-builders.js';
import type { InfraMachine } from '../../../../infra/api/infrastructure.banlieue.io/v1alpha1/infra-machine.js';
import {
  keptPlacement,
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
function machineAt(placement: Placement, change: Partial<InfraBuildInput> = {}): InfraMachine {
  const built = buildInfraMachine(input(placement, change), BUILT_IN_BACKENDS);
  if (!built.ok) throw new Error(built.message);
  return built.object;
}

describe('where a VM runs', () => {
  it.each(BACKENDS)('reads backend, Provider and failure domain from the %s machine', (backend) => {
    const placement = aPlacement(backend, { disks: 1 });
    expect(runningPlacement(machineAt(placement), BUILT_IN_BACKENDS)).toEqual({ providerClass: backend, providerName: `${backend}-a`, failureDomain: 'fd-1' });
  });

  it('reads a Provider or failure domain another writer removed as empty, so that it matches no placement', () => {
    const machine = machineAt(aPlacement('vsphere', { disks: 1 }));
    const { providerRef: _provider, failureDomain: _domain, ...unplaced } = machine.spec;
    const stripped = { ...machine, spec: unplaced };
    expect(runningPlacement(stripped, BUILT_IN_BACKENDS)).toEqual({ providerClass: 'vsphere', providerName: '', failureDomain: '' });
  });

  it.each<BackendName>(['vsphere', 'proxmox', 'libvirt'])('reads the image and class targets the %s machine carries back from its spec', (backend) => {
    const built = aPlacement(backend, { disks: 1 });
    const machine = machineAt(built);
    expect(runningPlacement(machine, BUILT_IN_BACKENDS, oneDiskClass)).toMatchObject({
      resolvedStorage: built.resolvedStorage,
      resolvedNetworks: built.resolvedNetworks,
    });
    const descriptor = BUILT_IN_BACKENDS.get(backend);
    expect(descriptor?.carriedTargets(machine.spec as never).imageRef).toBe(buildContextImage(built));
  });

  it('reads one target per disk when the disks resolve apart (Proxmox data disks)', () => {
    const built: Placement = {
      ...aPlacement('proxmox'),
      resolvedStorage: [
        { className: 'fast', backendId: 'ceph' },
        { className: 'fast', backendId: 'local-lvm' },
      ],
    };
    expect(runningPlacement(machineAt(built, { vmClass: aClass() }), BUILT_IN_BACKENDS, aClass()).resolvedStorage).toEqual(built.resolvedStorage);
  });

  it('reads no targets from a Cloud Hypervisor machine: it names classes and its host resolves them', () => {
    const running = runningPlacement(machineAt(aPlacement('cloud-hypervisor', { disks: 1 })), BUILT_IN_BACKENDS, oneDiskClass);
    expect(running.resolvedStorage).toBeUndefined();
    expect(running.resolvedNetworks).toBeUndefined();
  });

  it('leaves a list unread when the machine has not one target per class entry (the class changed since)', () => {
    const machine = machineAt(aPlacement('vsphere', { disks: 1 }));
    expect(runningPlacement(machine, BUILT_IN_BACKENDS, aClass()).resolvedStorage).toBeUndefined();
  });
});

describe('the placement a running VM is rebuilt with', () => {
  const provider = (backend: BackendName): Provider =>
    ({
      apiVersion: 'banlieue.io/v1alpha1',
      kind: 'Provider',
      metadata: { name: `${backend}-a`, namespace: 'team-a' },
      spec: { providerClassRef: { name: backend }, connection: { endpoint: 'https://example.invalid', credentialsSecretRef: { name: 'c' } } },
    }) as Provider;

  it.each<BackendName>(BACKENDS)('rebuilds the %s machine exactly as it is, whatever the Provider publishes now', (backend) => {
    const built = aPlacement(backend, { disks: 1 });
    const machine = machineAt(built);
    // Today the Provider publishes the failure domain with other facts and maps no classes: what the machine carries wins.
    const published = { name: 'fd-1', attributes: { raw: {} } };
    const kept = keptPlacement(recordedAt(machine, built), provider(backend), published, oneDiskClass, BUILT_IN_BACKENDS);
    expect(kept).toBeDefined();
    const again = buildInfraMachine(
      { ...input(kept?.placement ?? built), ...(kept?.imageRef !== undefined ? { imageRef: kept.imageRef } : {}) },
      BUILT_IN_BACKENDS,
    );
    expect(again.ok && again.object.spec).toEqual(machine.spec);
  });

  it('cannot rebuild a machine that recorded no facts, in a failure domain no longer published', () => {
    const built = aPlacement('vsphere', { disks: 1 });
    expect(keptPlacement(machineAt(built), provider('vsphere'), undefined, oneDiskClass, BUILT_IN_BACKENDS)).toBeUndefined();
  });
});

/** `machine` with status.placement recording where it was created (the failure domain's facts of then). */
function recordedAt(machine: InfraMachine, placement: Placement): InfraMachine {
  return {
    ...machine,
    status: {
      placement: { provider: placement.providerName, failureDomain: placement.failureDomain.name, location: placement.failureDomain.attributes?.raw ?? {} },
    },
  } as InfraMachine;
}

/** The image reference the builder writes for `placement` (the VMImage's source for its backend). */
function buildContextImage(placement: Placement): string | undefined {
  return resolveImageRef(anImage(), placement);
}

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
  const { scheduledAt, resolvedStorage, resolvedNetworks } = record;
  if (scheduledAt === undefined || !resolvedStorage || !resolvedNetworks)
    throw new Error('toScheduledPlacement made a record without its time or class targets');

  it.each<[string, ScheduledPlacement | undefined, boolean]>([
    ['says what the machine says', record, true],
    [
      'says so with keys in another order (as the API server returns them)',
      {
        scheduledAt,
        failureDomain: 'fd-1',
        providerName: 'vsphere-a',
        providerClass: 'vsphere',
        resolvedNetworks,
        resolvedStorage,
      },
      true,
    ],
    ['names another Provider', { ...record, providerName: 'vsphere-b' }, false],
    ['names another backend', { ...record, providerClass: 'proxmox' }, false],
    ['names another failure domain', { ...record, failureDomain: 'fd-2' }, false],
    [
      'names another storage target',
      {
        ...record,
        resolvedStorage: [
          { className: 'fast', backendId: 'ds-other' },
          { className: 'fast', backendId: 'ds-ssd' },
        ],
      },
      false,
    ],
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
    expect(recordRunning({ ...record, failureDomain: 'fd-2' }, bare, MADE)).toEqual({
      providerClass: 'vsphere',
      providerName: 'vsphere-a',
      failureDomain: 'fd-1',
      scheduledAt: record.scheduledAt,
    });
  });
});
