import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { Annotation } from '../../../../infra/api/well-known.js';
import { evaluateDrift, type DriftDecision } from '../../../../controller/reconcilers/virtual-machine/drift.js';
import { toScheduledPlacement, type Placement } from '../../../../controller/reconcilers/virtual-machine/placement.js';
import { aPlacement, aVm } from './fixtures.js';

const current = aPlacement('vsphere');
const NOW = new Date('2026-01-02T03:04:05.678Z');

function placedVm(spec: Partial<VirtualMachine['spec']> = {}, annotations?: Record<string, string>): VirtualMachine {
  const vm = aVm(spec, annotations ? { annotations } : {});
  return { ...vm, status: { scheduled: toScheduledPlacement(current, NOW) } };
}

const movedProvider: Placement = { ...current, providerName: 'vsphere-b' };
const movedFd: Placement = { ...current, failureDomain: { name: 'fd-2' } };
const movedStorage: Placement = { ...current, resolvedStorage: [{ className: 'fast', backendId: 'ds-other' }, ...current.resolvedStorage.slice(1)] };
const movedNetwork: Placement = { ...current, resolvedNetworks: [{ className: 'prod', backendId: 'pg-other' }] };

describe('placement drift', () => {
  it.each<[string, Placement, DriftDecision]>([
    ['the provider changed', movedProvider, { action: 'Recreate', reason: Reason.ProviderChanged }],
    ['the failure domain changed', movedFd, { action: 'Recreate', reason: Reason.FailureDomainChanged }],
    ['a storage class resolves elsewhere', movedStorage, { action: 'Recreate', reason: Reason.StorageMappingChanged }],
    ['a network class resolves elsewhere', movedNetwork, { action: 'Recreate', reason: Reason.NetworkMappingChanged }],
    ['the storage list is shorter', { ...current, resolvedStorage: current.resolvedStorage.slice(0, 1) }, { action: 'Recreate', reason: Reason.StorageMappingChanged }],
    ['provider and storage both changed (provider reported first)', { ...movedStorage, providerName: 'vsphere-b' }, { action: 'Recreate', reason: Reason.ProviderChanged }],
    ['FD and network both changed (FD reported first)', { ...movedNetwork, failureDomain: { name: 'fd-2' } }, { action: 'Recreate', reason: Reason.FailureDomainChanged }],
  ])('recreates an automatic VM when %s', (_, fresh, expected) => {
    expect(evaluateDrift(placedVm(), fresh)).toEqual(expected);
    expect(evaluateDrift(placedVm({ migrationPolicy: 'automatic' }), fresh)).toEqual(expected);
  });

  it.each<[string, VirtualMachine, Placement | undefined, DriftDecision]>([
    ['was never scheduled', aVm(), movedProvider, { action: 'InPlace' }],
    ['was never scheduled and cannot be now', aVm(), undefined, { action: 'InPlace' }],
    ['still fits its placement', placedVm(), aPlacement('vsphere'), { action: 'InPlace' }],
    ['still fits, though the FD labels changed', placedVm(), { ...current, failureDomain: { name: 'fd-1', labels: { zone: 'b' } } }, { action: 'InPlace' }],
    ['is placed but nothing fits any more', placedVm(), undefined, { action: 'StickToOld' }],
    ['drifted under policy never', placedVm({ migrationPolicy: 'never' }), movedFd, { action: 'StickToOld', reason: Reason.FailureDomainChanged }],
    ['drifted under policy manual', placedVm({ migrationPolicy: 'manual' }), movedStorage, { action: 'SurfaceOnly', reason: Reason.StorageMappingChanged }],
    [
      'drifted under policy manual, annotated migrate=false',
      placedVm({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'false' }),
      movedStorage,
      { action: 'SurfaceOnly', reason: Reason.StorageMappingChanged },
    ],
    [
      'drifted under policy manual, annotated migrate=true',
      placedVm({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'true' }),
      movedNetwork,
      { action: 'Recreate', reason: Reason.NetworkMappingChanged },
    ],
    ['is annotated migrate=true but did not drift', placedVm({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'true' }), current, { action: 'InPlace' }],
  ])('decides for a VM that %s', (_, vm, fresh, expected) => {
    expect(evaluateDrift(vm, fresh)).toEqual(expected);
  });

  it('treats a recorded placement without resolved lists as empty ones', () => {
    const vm: VirtualMachine = { ...aVm(), status: { scheduled: { providerName: 'vsphere-a', providerClass: 'vsphere', failureDomain: 'fd-1' } } };
    expect(evaluateDrift(vm, { ...current, resolvedStorage: [], resolvedNetworks: [] })).toEqual({ action: 'InPlace' });
    expect(evaluateDrift(vm, current)).toEqual({ action: 'Recreate', reason: Reason.StorageMappingChanged });
  });
});

describe('recorded placement', () => {
  it('records provider, failure domain name, resolved classes and the scheduling time at second precision', () => {
    expect(toScheduledPlacement(current, NOW)).toEqual({
      providerName: 'vsphere-a',
      providerClass: 'vsphere',
      failureDomain: 'fd-1',
      resolvedStorage: [
        { className: 'fast', backendId: 'ds-ssd' },
        { className: 'fast', backendId: 'ds-ssd' },
      ],
      resolvedNetworks: [{ className: 'prod', backendId: 'pg-prod' }],
      scheduledAt: '2026-01-02T03:04:05Z',
    });
  });
});
