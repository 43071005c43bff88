// Placement drift: where the VM runs (read from its infrastructure machine)
// against where the scheduler would put it now, per migrationPolicy.
import { describe, expect, it } from 'vitest';
import type { VirtualMachine } from '../../../../infra/api/banlieue.io/v1alpha1/virtual-machine.js';
import { Reason } from '../../../../infra/api/conditions.js';
import { Annotation } from '../../../../infra/api/well-known.js';
import { describeDrift, evaluateDrift, type DriftDecision } from '../../../../controller/reconcilers/virtual-machine/drift.js';
import { toScheduledPlacement, type Placement, type RunningPlacement } from '../../../../controller/reconcilers/virtual-machine/placement.js';
import { aPlacement, aVm } from './fixtures.js';

const current = aPlacement('vsphere');
const NOW = new Date('2026-01-02T03:04:05.678Z');

/** The VM runs where `current` says, its machine carrying every class target. */
const running: RunningPlacement = {
  providerClass: current.providerClass,
  providerName: current.providerName,
  failureDomain: current.failureDomain.name,
  resolvedStorage: current.resolvedStorage,
  resolvedNetworks: current.resolvedNetworks,
};
/** A machine that names classes, not targets (its host resolves them). */
const runningWithoutTargets: RunningPlacement = { providerClass: current.providerClass, providerName: current.providerName, failureDomain: current.failureDomain.name };

function vmWith(spec: Partial<VirtualMachine['spec']> = {}, annotations?: Record<string, string>): VirtualMachine {
  return aVm(spec, annotations ? { annotations } : {});
}

const movedProvider: Placement = { ...current, providerName: 'vsphere-b' };
const movedFd: Placement = { ...current, failureDomain: { name: 'fd-2' } };
const movedStorage: Placement = { ...current, resolvedStorage: [{ className: 'fast', backendId: 'ds-other' }, ...current.resolvedStorage.slice(1)] };
const movedNetwork: Placement = { ...current, resolvedNetworks: [{ className: 'prod', backendId: 'pg-other' }] };

describe('placement drift', () => {
  it.each<[string, Placement, DriftDecision]>([
    ['the provider changed', movedProvider, { action: 'Recreate', reason: Reason.ProviderChanged }],
    ['the backend changed (same Provider name)', { ...current, providerClass: 'proxmox' }, { action: 'Recreate', reason: Reason.ProviderChanged }],
    ['the failure domain changed', movedFd, { action: 'Recreate', reason: Reason.FailureDomainChanged }],
    ['a storage class resolves elsewhere', movedStorage, { action: 'Recreate', reason: Reason.StorageMappingChanged }],
    ['a network class resolves elsewhere', movedNetwork, { action: 'Recreate', reason: Reason.NetworkMappingChanged }],
    ['provider and storage both changed (provider reported first)', { ...movedStorage, providerName: 'vsphere-b' }, { action: 'Recreate', reason: Reason.ProviderChanged }],
    ['FD and network both changed (FD reported first)', { ...movedNetwork, failureDomain: { name: 'fd-2' } }, { action: 'Recreate', reason: Reason.FailureDomainChanged }],
  ])('recreates an automatic VM when %s', (_, fresh, expected) => {
    expect(evaluateDrift(vmWith(), running, fresh)).toEqual(expected);
    expect(evaluateDrift(vmWith({ migrationPolicy: 'automatic' }), running, fresh)).toEqual(expected);
  });

  it.each<[string, VirtualMachine, RunningPlacement | undefined, Placement | undefined, DriftDecision]>([
    ['runs nowhere', vmWith(), undefined, movedProvider, { action: 'InPlace' }],
    ['runs nowhere and cannot be placed now', vmWith(), undefined, undefined, { action: 'InPlace' }],
    ['still fits where it runs', vmWith(), running, aPlacement('vsphere'), { action: 'InPlace' }],
    ['still fits, though the FD labels changed', vmWith(), running, { ...current, failureDomain: { name: 'fd-1', labels: { zone: 'b' } } }, { action: 'InPlace' }],
    ['runs but nothing fits any more', vmWith(), running, undefined, { action: 'StickToOld' }],
    ['drifted under policy never', vmWith({ migrationPolicy: 'never' }), running, movedFd, { action: 'StickToOld', reason: Reason.FailureDomainChanged }],
    ['drifted under policy manual', vmWith({ migrationPolicy: 'manual' }), running, movedStorage, { action: 'SurfaceOnly', reason: Reason.StorageMappingChanged }],
    [
      'drifted under policy manual, annotated migrate=false',
      vmWith({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'false' }),
      running,
      movedStorage,
      { action: 'SurfaceOnly', reason: Reason.StorageMappingChanged },
    ],
    [
      'drifted under policy manual, annotated migrate=true',
      vmWith({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'true' }),
      running,
      movedNetwork,
      { action: 'Recreate', reason: Reason.NetworkMappingChanged },
    ],
    ['is annotated migrate=true but did not drift', vmWith({ migrationPolicy: 'manual' }, { [Annotation.migrate]: 'true' }), running, current, { action: 'InPlace' }],
    ['runs on a machine carrying no class targets, the mapping changed', vmWith(), runningWithoutTargets, movedStorage, { action: 'InPlace' }],
    ['runs on a machine carrying no class targets, the FD changed', vmWith(), runningWithoutTargets, movedFd, { action: 'Recreate', reason: Reason.FailureDomainChanged }],
  ])('decides for a VM that %s', (_, vm, where, fresh, expected) => {
    expect(evaluateDrift(vm, where, fresh)).toEqual(expected);
  });

  it.each<[string, VirtualMachine['status']]>([
    ['another Provider', { scheduled: toScheduledPlacement(movedProvider, NOW) }],
    ['another failure domain', { scheduled: toScheduledPlacement(movedFd, NOW) }],
    ['other class targets', { scheduled: toScheduledPlacement(movedStorage, NOW) }],
    ['nothing', {}],
  ])('ignores status.scheduled naming %s: only the machine says where the VM runs', (_, status) => {
    const vm = { ...vmWith(), status };
    expect(evaluateDrift(vm, running, current)).toEqual({ action: 'InPlace' });
    expect(evaluateDrift(vm, running, movedFd)).toEqual({ action: 'Recreate', reason: Reason.FailureDomainChanged });
  });

  it.each<[string, Placement, Parameters<typeof describeDrift>[0], string]>([
    ['the Provider', movedProvider, Reason.ProviderChanged, 'the Provider no longer fits: vsphere-a/fd-1 → vsphere-b/fd-1'],
    ['the failure domain', movedFd, Reason.FailureDomainChanged, 'the failure domain no longer fits: vsphere-a/fd-1 → vsphere-a/fd-2'],
    ['a storage target', movedStorage, Reason.StorageMappingChanged, 'a storage class now resolves differently on vsphere-a/fd-1: class "fast": ds-ssd → ds-other'],
    ['a network target', movedNetwork, Reason.NetworkMappingChanged, 'a network class now resolves differently on vsphere-a/fd-1: class "prod": pg-prod → pg-other'],
  ])('names the old and the new placement when %s changed', (_, fresh, reason, message) => {
    expect(describeDrift(reason, running, fresh)).toBe(message);
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
